import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, dataOf } from '../api.ts';
import { AsyncView, ConfirmButton, Empty, ErrorNotice, StatusBadge, Time } from '../components.tsx';
import { HtmlPreview } from '../preview.tsx';
import { href, navigate, type Route } from '../router.ts';
import type { TemplateDetail, TemplateList, TemplateRender, TemplateVersion } from '../types.ts';
import { useAction, useAsync } from '../use-async.ts';

/**
 * Templates: the account's templates, a new one, and for each an editor with a live preview
 * through `POST /template/render-1.0` (rendered as the recipient would see it, with the errors by
 * part and line and a suggested model), drafts saved as new versions, publishing, the version
 * history and rollback (publishing an older version).
 */
const pageSize = 50;
/** The preview renders this long after the last keystroke. */
const renderDelayMs = 400;

async function templatePage(cursor: string | undefined): Promise<TemplateList> {
  const data = await dataOf(
    api().POST('/template/query-1.0', {
      body: { filters: { limit: pageSize }, ...(cursor === undefined ? {} : { cursor }) },
    }),
  );
  if (!('templates' in data)) throw new Error('The API answered one template where a page was asked for');
  return data;
}

async function templateVersion(alias: string, version: number | undefined): Promise<TemplateDetail> {
  const data = await dataOf(
    api().POST('/template/query-1.0', { body: { alias, ...(version === undefined ? {} : { version }) } }),
  );
  if ('templates' in data) throw new Error('The API answered a page where one template was asked for');
  return data;
}

export function TemplatesPage({ route }: { route: Route }) {
  if (route.id === undefined) return <TemplateListView cursor={route.query.get('cursor') ?? undefined} />;
  const version = Number(route.query.get('version'));
  return (
    <TemplateEditor
      key={route.id}
      alias={route.id}
      version={Number.isInteger(version) && version > 0 ? version : undefined}
    />
  );
}

function TemplateListView({ cursor }: { cursor: string | undefined }) {
  const [page, reload] = useAsync(() => templatePage(cursor), [cursor]);
  return (
    <>
      <h1>Templates</h1>
      <p class="lead">
        Handlebars templates in numbered versions: send with <code>"template":{'{"alias","model"}'}</code> and
        the published version is rendered when the message is accepted.
      </p>
      <AsyncView value={page} loading="Loading templates" onRetry={reload}>
        {(result) =>
          result.templates.length === 0 ? (
            <Empty title="No templates yet">
              <p>Create one below, or push a folder of templates with npm run templates -- push.</p>
            </Empty>
          ) : (
            <>
              <table class="list">
                <thead>
                  <tr>
                    <th scope="col">Alias</th>
                    <th scope="col">Name</th>
                    <th scope="col">Published</th>
                    <th scope="col">Latest</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {result.templates.map((template) => (
                    <tr key={template.alias}>
                      <td>
                        <a href={href('templates', template.alias)}>
                          <code>{template.alias}</code>
                        </a>
                      </td>
                      <td>{template.name}</td>
                      <td>
                        {template.published_version === null ? (
                          <span class="muted">none</span>
                        ) : (
                          `version ${template.published_version}`
                        )}
                      </td>
                      <td>version {template.latest_version}</td>
                      <td>
                        <Time value={template.updated_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <nav class="pager" aria-label="Pages">
                {cursor === undefined ? null : <a href={href('templates')}>First page</a>}
                {result.next_cursor === null ? (
                  <span class="muted">End of the list</span>
                ) : (
                  <a href={href('templates', undefined, { cursor: result.next_cursor })}>Next page</a>
                )}
              </nav>
            </>
          )
        }
      </AsyncView>
      <NewTemplate />
    </>
  );
}

function NewTemplate() {
  const [alias, setAlias] = useState('');
  const [name, setName] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await dataOf(
        api().POST('/template/add-1.0', {
          body: {
            alias: alias.trim(),
            name: name.trim(),
            subject: 'Hello {{name}}',
            html: '<p>Hello {{name}},</p>',
          },
        }),
      );
      navigate(href('templates', alias.trim()));
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="new-template">
      <h2 id="new-template">New template</h2>
      <div class="row">
        <label>
          Alias{' '}
          <input
            type="text"
            required
            pattern="[a-z0-9_\-]{1,100}"
            title="1 to 100 of a-z 0-9 _ -"
            value={alias}
            onInput={(event) => setAlias(event.currentTarget.value)}
          />
        </label>
        <label>
          Name{' '}
          <input type="text" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>
          Create
        </button>
      </div>
      <p class="muted">It starts as a draft with a greeting you can change in the editor.</p>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
    </form>
  );
}

interface Draft {
  subject: string;
  html: string;
  text: string;
  layout: string;
}

function draftOf(version: TemplateVersion): Draft {
  return {
    subject: version.subject,
    html: version.html ?? '',
    text: version.text ?? '',
    layout: version.layout_alias ?? '',
  };
}

function TemplateEditor({ alias, version }: { alias: string; version: number | undefined }) {
  const [loaded, reload] = useAsync(() => templateVersion(alias, version), [alias, version]);
  // Kept here, above the form, which starts afresh for each version shown.
  const [notice, setNotice] = useState<string>();
  if (loaded.state === 'error' && loaded.error instanceof ApiError && loaded.error.code === 112)
    return (
      <>
        <p class="breadcrumb">
          <a href={href('templates')}>Templates</a> / editor
        </p>
        <Empty title={`There is no template ${alias}`}>
          <p>
            Check the alias, or create it on the <a href={href('templates')}>Templates</a> page.
          </p>
        </Empty>
      </>
    );
  return (
    <>
      <p class="breadcrumb">
        <a href={href('templates')}>Templates</a> / editor
      </p>
      {notice === undefined ? null : (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <AsyncView value={loaded} loading={`Loading ${alias}`} onRetry={reload}>
        {(detail) => (
          <EditorForm key={detail.version.version} detail={detail} onSaved={reload} onNotice={setNotice} />
        )}
      </AsyncView>
    </>
  );
}

function EditorForm({
  detail,
  onSaved,
  onNotice,
}: {
  detail: TemplateDetail;
  onSaved: () => void;
  onNotice: (text: string | undefined) => void;
}) {
  const { template } = detail;
  const shown = detail.version;
  const [draft, setDraft] = useState<Draft>(() => draftOf(shown));
  // Undefined until the first render suggests a model: the editor opens with it filled in.
  const [model, setModel] = useState<string>();
  const action = useAction();
  const latest = template.versions[0]?.version;
  const changed = JSON.stringify(draft) !== JSON.stringify(draftOf(shown));
  const set = (part: keyof Draft) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [part]: event.currentTarget.value });

  const save = () =>
    action.run(async () => {
      const result = await dataOf(
        api().POST('/template/update-1.0', {
          body: {
            alias: template.alias,
            subject: draft.subject,
            html: draft.html === '' ? null : draft.html,
            text: draft.text === '' ? null : draft.text,
            layout_alias: draft.layout === '' ? null : draft.layout,
          },
        }),
      );
      onNotice(`Saved as version ${result.version} (a draft).`);
      navigate(href('templates', template.alias));
      onSaved();
    });
  const publish = (version: number) =>
    action.run(async () => {
      await dataOf(api().POST('/template/publish-1.0', { body: { alias: template.alias, version } }));
      onNotice(`Version ${version} is published: messages sent with ${template.alias} use it from now on.`);
      onSaved();
    });
  const remove = () =>
    action.run(async () => {
      await dataOf(api().POST('/template/delete-1.0', { body: { alias: template.alias } }));
      navigate(href('templates'));
    });

  return (
    <>
      <h1>
        {template.name} <code class="muted">{template.alias}</code>
      </h1>
      <p>
        Showing version {shown.version} <StatusBadge status={shown.status} />
        {shown.version === latest ? ' (the latest)' : ''}
        {template.published_version === null
          ? '; nothing is published yet.'
          : `; version ${template.published_version} is published.`}
      </p>
      {action.error === undefined ? null : <ErrorNotice error={action.error} />}
      <div class="editor">
        <div class="editor-parts">
          <label>
            Subject <input type="text" class="wide" value={draft.subject} onInput={set('subject')} />
          </label>
          <label for="template-html">HTML</label>
          <textarea id="template-html" class="code" rows={12} value={draft.html} onInput={set('html')} />
          <label for="template-text">Text (derived from the HTML when empty)</label>
          <textarea id="template-text" class="code" rows={5} value={draft.text} onInput={set('text')} />
          <label>
            Layout (another template's alias){' '}
            <input type="text" value={draft.layout} onInput={set('layout')} />
          </label>
          <div class="toolbar">
            <button type="button" class="primary" disabled={action.busy || !changed} onClick={save}>
              Save as a new draft
            </button>
            {shown.status === 'published' || changed ? null : (
              <button type="button" disabled={action.busy} onClick={() => publish(shown.version)}>
                Publish version {shown.version}
              </button>
            )}
            <ConfirmButton
              label="Delete template"
              question={`Delete ${template.alias} and all its versions?`}
              busy={action.busy}
              danger
              onConfirm={remove}
            />
          </div>
        </div>
        <LivePreview draft={draft} model={model} onModel={setModel} />
      </div>
      <Versions detail={detail} busy={action.busy} onPublish={publish} />
    </>
  );
}

/** Renders the draft as it is typed (debounced), through the API's render route. */
function LivePreview({
  draft,
  model,
  onModel,
}: {
  draft: Draft;
  /** Undefined until the first render: then the suggested model fills it. */
  model: string | undefined;
  onModel: (value: string) => void;
}) {
  const [result, setResult] = useState<TemplateRender>();
  const [error, setError] = useState<unknown>();
  const latest = useRef(0);
  let parsedModel: Record<string, unknown> | undefined;
  let modelProblem: string | undefined;
  try {
    const value = JSON.parse(model ?? '{}') as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      modelProblem = 'The model must be a JSON object';
    else parsedModel = value as Record<string, unknown>;
  } catch (failure) {
    modelProblem = `The model is not JSON: ${failure instanceof Error ? failure.message : String(failure)}`;
  }
  // The request as text: the effect runs again when the draft or the model change, not on every render.
  const request = JSON.stringify({ draft, parsedModel });
  useEffect(() => {
    if (parsedModel === undefined) return;
    const ticket = ++latest.current;
    const timer = setTimeout(() => {
      dataOf(
        api().POST('/template/render-1.0', {
          body: {
            subject: draft.subject,
            ...(draft.html === '' ? {} : { html: draft.html }),
            ...(draft.text === '' ? {} : { text: draft.text }),
            ...(draft.layout === '' ? {} : { layout_alias: draft.layout }),
            model: parsedModel,
          },
        }),
      ).then(
        (rendered) => {
          if (ticket !== latest.current) return;
          if (model === undefined) {
            // The first render only finds the variables: the editor opens with them filled in, and
            // shows the render of that model, so a new template never opens with missing values.
            const suggested = JSON.stringify(rendered.suggested_model, null, 2);
            onModel(suggested);
            if (suggested !== '{}') return;
          }
          setResult(rendered);
          setError(undefined);
        },
        (failure: unknown) => {
          if (ticket === latest.current) setError(failure);
        },
      );
    }, renderDelayMs);
    return () => clearTimeout(timer);
  }, [request]);

  return (
    <section class="editor-preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <label for="template-model">Model (JSON)</label>
      <textarea
        id="template-model"
        class="code"
        rows={5}
        value={model ?? ''}
        onInput={(event) => onModel(event.currentTarget.value)}
      />
      {result === undefined ? null : (
        <button
          type="button"
          class="small"
          onClick={() => onModel(JSON.stringify(result.suggested_model, null, 2))}
        >
          Use the suggested model
        </button>
      )}
      {modelProblem === undefined ? null : (
        <p class="notice error" role="alert">
          {modelProblem}
        </p>
      )}
      {error === undefined ? null : <ErrorNotice error={error} />}
      {result === undefined ? (
        <p class="muted" role="status">
          Rendering …
        </p>
      ) : (
        <>
          {result.errors.length === 0 ? (
            <p class="muted" role="status">
              No errors.
            </p>
          ) : (
            <ul class="notice error render-errors" aria-label="Template errors">
              {result.errors.map((problem) => (
                <li key={`${problem.part}:${problem.line}:${problem.message}`}>
                  <code>
                    {problem.part} line {problem.line}
                  </code>{' '}
                  {problem.message}
                </li>
              ))}
            </ul>
          )}
          <p>
            <strong>Subject:</strong> <span class="rendered-subject">{result.subject}</span>
          </p>
          {result.html === null ? (
            <p class="muted">No HTML part.</p>
          ) : (
            <HtmlPreview html={result.html} title="Rendered HTML" />
          )}
          <h3>Text</h3>
          <pre class="rendered-text">{result.text ?? ''}</pre>
        </>
      )}
    </section>
  );
}

function Versions({
  detail,
  busy,
  onPublish,
}: {
  detail: TemplateDetail;
  busy: boolean;
  onPublish: (version: number) => void;
}) {
  const { template } = detail;
  return (
    <>
      <h2>Versions</h2>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {template.versions.map((entry) => (
            <tr key={entry.version}>
              <td>
                <a href={href('templates', template.alias, { version: String(entry.version) })}>
                  version {entry.version}
                </a>
                {entry.version === detail.version.version ? <span class="muted"> (shown)</span> : null}
              </td>
              <td>
                <StatusBadge status={entry.status} />
              </td>
              <td>
                <Time value={entry.created_at} />
              </td>
              <td>
                {entry.status === 'published' ? null : (
                  <button
                    type="button"
                    class="small"
                    disabled={busy}
                    aria-label={`Publish version ${entry.version}`}
                    onClick={() => onPublish(entry.version)}
                  >
                    {entry.status === 'superseded' ? 'Roll back to it' : 'Publish'}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
