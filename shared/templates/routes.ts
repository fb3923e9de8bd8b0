import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at } from '../platform/schemas/examples.ts';
import {
  templateAddRequest,
  templateAddResponse,
  templateDeleteRequest,
  templateDeleteResponse,
  templatePublishRequest,
  templatePublishResponse,
  templateQueryRequest,
  templateQueryResponse,
  templateRenderRequest,
  templateRenderResponse,
  templateUpdateRequest,
  templateUpdateResponse,
} from './schemas.ts';

export const templateAdd = route('template-add', 'POST /template/add-1.0', ['templates:write'], {
  dryRun: true,
});
export const templateUpdate = route('template-update', 'POST /template/update-1.0', ['templates:write'], {
  dryRun: true,
});
export const templatePublish = route('template-publish', 'POST /template/publish-1.0', ['templates:write'], {
  dryRun: true,
});
export const templateQuery = route('template-query', 'POST /template/query-1.0', ['templates:read']);
export const templateDelete = route('template-delete', 'POST /template/delete-1.0', ['templates:write'], {
  dryRun: true,
});
export const templateRender = route('template-render', 'POST /template/render-1.0', ['templates:read']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const templatesRoutes = [
  templateAdd,
  templateUpdate,
  templatePublish,
  templateQuery,
  templateDelete,
  templateRender,
] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
/** The example template as the update and publish answers show it, one `[version, status]` a version. */
function exampleWelcome(publishedVersion: number, versions: readonly (readonly [number, string])[]) {
  return {
    alias: 'welcome',
    name: 'Welcome mail',
    published_version: publishedVersion,
    versions: versions.map(([version, status]) => ({ version, status, created_at: at })),
  };
}

export const templatesRouteDetails = {
  'template-add': {
    summary: 'Add a template with its first version (a draft)',
    tag: 'templates',
    // Templates (docs/templates.md): records and counter in the table, each version's parts under
    // templates/. Add and update write parts (and remove those of a write that lost a race or of a
    // version removed at the limit); delete removes records and parts; query and render only read.
    access: { table: 'write', objects: { 'templates/': ['write', 'delete'] } },
    request: templateAddRequest,
    requestIn: 'body',
    response: templateAddResponse,
    // 111: the alias is taken, or the account has 1,000 templates; 112: layout_alias is not yours;
    // 5: a concurrent write of the same template.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        welcome: {
          summary: 'A template with HTML and text, in a layout',
          value: {
            alias: 'welcome',
            name: 'Welcome mail',
            subject: 'Welcome, {{user.first_name}}',
            html: '<h1>Hello {{user.first_name}}</h1>{{#each items}}<p>{{title}}: {{price}}</p>{{/each}}',
            text: 'Hello {{user.first_name}}\n{{#each items}}- {{title}}: {{price}}\n{{/each}}',
            layout_alias: 'base-layout',
          },
        },
      },
      response: {
        added: {
          summary: 'Added: version 1, a draft',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: null,
              versions: [{ version: 1, status: 'draft', created_at: at }],
            },
            version: 1,
          },
        },
      },
    },
  },
  'template-update': {
    summary: 'Make a new draft version of a template, or rename it',
    tag: 'templates',
    access: { table: 'write-delete', objects: { 'templates/': ['read', 'write', 'delete'] } },
    request: templateUpdateRequest,
    requestIn: 'body',
    response: templateUpdateResponse,
    // 112: no such template or layout; 5: a concurrent write that kept winning.
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: {
        subject: {
          summary: 'A new draft with another subject',
          value: { alias: 'welcome', subject: 'Hi {{user.first_name}}!' },
        },
      },
      response: {
        drafted: {
          summary: 'Version 3 drafted while version 2 is live',
          value: {
            template: exampleWelcome(2, [
              [3, 'draft'],
              [2, 'published'],
              [1, 'superseded'],
            ]),
            version: 3,
          },
        },
      },
    },
  },
  'template-publish': {
    summary: 'Make a version of a template the live one (an older one: rollback)',
    tag: 'templates',
    access: { table: 'write' },
    request: templatePublishRequest,
    requestIn: 'body',
    response: templatePublishResponse,
    // 112: no such template or version; 111: its layout does not exist or has nothing published.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: {
        latest: { summary: 'Publish the latest version', value: { alias: 'welcome' } },
        rollback: { summary: 'Roll back to version 1', value: { alias: 'welcome', version: 1 } },
      },
      response: {
        rolledBack: {
          summary: 'Version 1 is live again',
          value: {
            template: exampleWelcome(1, [
              [2, 'superseded'],
              [1, 'published'],
            ]),
            version: 1,
          },
        },
      },
    },
  },
  'template-query': {
    summary: 'One template with a version in full, or a page of your templates',
    tag: 'templates',
    access: { table: 'read', objects: { 'templates/': ['read'] } },
    request: templateQueryRequest,
    requestIn: 'body',
    response: templateQueryResponse,
    // 112: no such template or version.
    errors: [Code.NotFound],
    examples: {
      request: {
        one: { summary: 'A template with its latest version', value: { alias: 'welcome' } },
        page: { summary: 'Your templates', value: { filters: { limit: 50 } } },
      },
      response: {
        one: {
          summary: 'The template and version 1',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 1,
              versions: [{ version: 1, status: 'published', created_at: at }],
            },
            version: {
              version: 1,
              status: 'published',
              created_at: at,
              subject: 'Welcome, {{user.first_name}}',
              html: '<h1>Hello {{user.first_name}}</h1>',
              text: null,
              layout_alias: null,
            },
          },
        },
      },
    },
  },
  'template-delete': {
    summary: 'Delete a template with all its versions',
    tag: 'templates',
    access: { table: 'write-delete', objects: { 'templates/': ['delete'] } },
    request: templateDeleteRequest,
    requestIn: 'body',
    response: templateDeleteResponse,
    // 112: no such template; 111: another template uses it as its layout.
    errors: [Code.CommitFailed, Code.MethodValidation, Code.NotFound],
    examples: {
      request: { one: { summary: 'Delete a template', value: { alias: 'welcome' } } },
      response: {
        deleted: {
          summary: 'Deleted',
          value: {
            template: {
              alias: 'welcome',
              name: 'Welcome mail',
              published_version: 1,
              versions: [{ version: 1, status: 'published', created_at: at }],
            },
            version: null,
            deleted: true,
          },
        },
      },
    },
  },
  'template-render': {
    summary: "Render a template or inline parts over a model (the editor's preview)",
    tag: 'templates',
    access: { table: 'read', objects: { 'templates/': ['read'] } },
    request: templateRenderRequest,
    requestIn: 'body',
    response: templateRenderResponse,
    // 112: no such template, version or layout. Problems of the template or model are data.
    errors: [Code.NotFound],
    examples: {
      request: {
        inline: {
          summary: 'Preview what the editor holds',
          value: {
            subject: 'Hi {{name}}',
            html: '<p>Hello {{name}}</p>\n<p>{{plan.title}}</p>',
            model: { name: 'Ada' },
          },
        },
        stored: {
          summary: 'Preview a stored version',
          value: { alias: 'welcome', version: 2, model: { user: { first_name: 'Ada' } } },
        },
      },
      response: {
        withErrors: {
          summary: 'Rendered, with a missing variable named',
          value: {
            subject: 'Hi Ada',
            html: '<p>Hello Ada</p>\n<p></p>',
            text: 'Hello Ada',
            errors: [{ part: 'html', line: 2, message: 'plan.title is not in the model' }],
            suggested_model: { name: 'name_Value', plan: { title: 'title_Value' } },
          },
        },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof templatesRoutes)[number]>;
