import { randomUUID } from 'node:crypto';
import { Code } from '../platform/errors/catalogue.ts';
import { type ErrorDetail, isServiceError, ServiceError } from '../platform/errors/service-error.ts';
import { textFromHtml } from '../platform/mail/text-from-html.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { formatDate } from '../platform/time/format.ts';
import { compiledTemplates } from './model/cache.ts';
import {
  type CompiledTemplate,
  compileTemplate,
  describeMissing,
  partsBytes,
  renderTemplate,
  type TemplateParts,
} from './model/render.ts';
import { maxRenderedBytes, RenderBudgetError } from './model/render-budget.ts';
import type { TemplateProblem } from './model/syntax.ts';
import {
  maxTemplatesPerAccount,
  maxVersionBytes,
  type TemplateHead,
  templateSummaryView,
  templateView,
  type VersionRecord,
  versionStatus,
  versionToPrune,
} from './model/template.ts';
import { previewPool } from './preview/pool.ts';
import type { PreviewJob } from './preview/work.ts';
import type {
  TemplateAddRequest,
  TemplateDeleteRequest,
  TemplatePublishRequest,
  TemplateQueryRequest,
  TemplateRenderRequest,
  TemplateUpdateRequest,
} from './schemas.ts';
import {
  addVersion,
  allTemplateHeads,
  countTemplates,
  createTemplate,
  deleteParts,
  deleteTemplateHead,
  deleteVersionRecords,
  getParts,
  getTemplateHead,
  getVersion,
  listTemplateHeads,
  listVersions,
  publishVersion,
  putParts,
  renameTemplate,
  templateKeys,
} from './store/templates.ts';

/**
 * The template routes and rendering for sending (docs/templates.md). Every write makes a new
 * immutable version or moves the record's pointers under a revision condition; a conflicting
 * concurrent write is retried from a fresh read. Compiled versions are cached per function instance
 * by template id and version (shared/templates/model/cache.ts).
 */

type TemplateView = ReturnType<typeof templateView>;

export interface WriteResult {
  template: TemplateView;
  version: number | null;
  dry_run?: true;
  deleted?: true;
}

/** Writes retried after a concurrent change of the same template, before answering 5. */
const writeAttempts = 3;

const notFound = (alias: string, field = 'alias') =>
  new ServiceError(Code.NotFound, `No template ${alias}`, {
    details: [{ field, message: 'You have no template with this alias' }],
  });

const versionNotFound = (alias: string, version: number, field = 'version') =>
  new ServiceError(Code.NotFound, `Template ${alias} has no version ${version}`, {
    details: [{ field, message: `No version ${version}` }],
  });

const invalid = (details: ErrorDetail[]) => new ServiceError(Code.InvalidInput, undefined, { details });

const conflict = () =>
  new ServiceError(Code.CommitFailed, 'The template changed while this request ran; retry', {});

const problemDetails = (problems: readonly TemplateProblem[], prefix = '') =>
  problems.map((problem) => ({
    field: `${prefix}${problem.part}`,
    message: `line ${problem.line}: ${problem.message}`,
  }));

async function requireHead(account: string, alias: string, field = 'alias'): Promise<TemplateHead> {
  const head = await getTemplateHead(account, alias);
  if (head === undefined) throw notFound(alias, field);
  return head;
}

async function requireVersion(
  head: TemplateHead,
  version: number,
  field = 'version',
): Promise<VersionRecord> {
  const record = await getVersion(head.templateId, version);
  if (record === undefined) throw versionNotFound(head.alias, version, field);
  return record;
}

const cacheKey = (head: TemplateHead, version: number, prefix: string) =>
  `${head.templateId}:${version}:${prefix}`;

/**
 * A stored version, compiled once per function instance. A version never changes, so once compiled
 * it is served from the cache without reading its record or its parts again (`field` names the
 * request field in the 112 of a version that does not exist).
 */
async function compiledVersion(
  head: TemplateHead,
  version: number | VersionRecord,
  options: { prefix?: string; field?: string } = {},
): Promise<CompiledTemplate & { layoutAlias: string | null }> {
  const prefix = options.prefix ?? '';
  const number = typeof version === 'number' ? version : version.version;
  const cached = compiledTemplates.get(cacheKey(head, number, prefix));
  // Stored versions are cached with their layout alias (the same object each time: suggestedFor keys on it).
  if (cached !== undefined) return cached as CompiledTemplate & { layoutAlias: string | null };
  const record = typeof version === 'number' ? await requireVersion(head, version, options.field) : version;
  const compiled = compileTemplate(await getParts(record.objectKey), prefix);
  // Versions are checked when they are written: a stored one that does not compile is a fault.
  if (!compiled.ok) throw new Error(`stored template version ${record.version} does not compile`);
  const template = { ...compiled.template, layoutAlias: record.layoutAlias };
  compiledTemplates.set(cacheKey(head, number, prefix), template);
  return template;
}

/** A layout alias must name another template of the account (112 otherwise). */
async function requireLayout(
  account: string,
  layoutAlias: string | null,
  field = 'layout_alias',
): Promise<void> {
  if (layoutAlias === null) return;
  await requireHead(account, layoutAlias, field);
}

/** Parts that would be stored: at most 500 KB, HTML or text, and Handlebars the service accepts. */
function checkParts(parts: TemplateParts): CompiledTemplate {
  if (parts.html === null && parts.text === null) {
    throw invalid([{ field: 'html', message: 'A template needs html, text or both' }]);
  }
  const bytes = partsBytes(parts);
  if (bytes > maxVersionBytes) {
    throw invalid([
      {
        field: parts.html === null ? 'text' : 'html',
        message: `subject, html and text together are ${Math.ceil(bytes / 1024)} KB; at most ${maxVersionBytes / 1024} KB`,
      },
    ]);
  }
  const compiled = compileTemplate(parts);
  if (!compiled.ok) throw invalid(problemDetails(compiled.problems));
  return compiled.template;
}

/** Runs a write again (from a fresh read) when a concurrent change of the template won. */
async function retried<T>(attempt: () => Promise<T | 'conflict'>): Promise<T> {
  for (let tries = 0; tries < writeAttempts; tries++) {
    const outcome = await attempt();
    if (outcome !== 'conflict') return outcome;
  }
  throw conflict();
}

/** Best effort: objects of versions that are gone (a failure leaves only an unreachable object). */
async function dropParts(keys: string[]): Promise<void> {
  try {
    await deleteParts(keys);
  } catch (error) {
    log('warn', 'template parts left in the bucket', { keys: keys.length, ...describeError(error) });
  }
}

/**
 * After a failed write of a version record: its parts are removed, unless the database was
 * unreachable (code 4), when the write may still have committed; orphaned parts are harmless, a
 * version without its parts would not be.
 */
const dropPartsUnlessUnsure =
  (version: VersionRecord) =>
  async (error: unknown): Promise<never> => {
    if (!(isServiceError(error) && error.code === Code.DatabaseUnavailable))
      await dropParts([version.objectKey]);
    throw error;
  };

const aliasTaken = (alias: string) =>
  new ServiceError(Code.MethodValidation, `You already have a template ${alias}`, {
    details: [{ field: 'alias', message: 'Taken: update it, or delete it first' }],
  });

const limitReached = () =>
  new ServiceError(Code.MethodValidation, `An account has at most ${maxTemplatesPerAccount} templates`, {
    details: [{ field: 'alias', message: `You have ${maxTemplatesPerAccount} templates: delete one first` }],
  });

// ---------------------------------------------------------------------------------------------
// Writes

export async function addTemplate(
  input: TemplateAddRequest,
  account: string,
  dryRun: boolean,
): Promise<WriteResult> {
  const parts: TemplateParts = { subject: input.subject, html: input.html ?? null, text: input.text ?? null };
  const compiled = checkParts(parts);
  const layout = input.layout_alias ?? null;
  await requireLayout(account, layout);
  if ((await getTemplateHead(account, input.alias)) !== undefined) throw aliasTaken(input.alias);
  const at = new Date().toISOString();
  const templateId = randomUUID();
  const version: VersionRecord = {
    version: 1,
    createdAt: at,
    layoutAlias: layout,
    objectKey: templateKeys.object(templateId, 1),
    bytes: compiled.bytes,
  };
  const head: TemplateHead = {
    accountId: account,
    alias: input.alias,
    name: input.name,
    templateId,
    latestVersion: 1,
    publishedVersion: null,
    everPublished: [],
    latestLayout: layout,
    publishedLayout: null,
    createdAt: at,
    updatedAt: at,
    revision: 0,
  };
  if (dryRun) {
    if ((await countTemplates(account)) >= maxTemplatesPerAccount) throw limitReached();
    return { template: templateView(head, [version]), version: 1, dry_run: true };
  }
  await putParts(version.objectKey, parts);
  const outcome = await createTemplate(head, version, maxTemplatesPerAccount).catch(
    dropPartsUnlessUnsure(version),
  );
  if (outcome !== 'created') {
    await dropParts([version.objectKey]);
    throw outcome === 'limit' ? limitReached() : aliasTaken(input.alias);
  }
  compiledTemplates.set(cacheKey(head, 1, ''), { ...compiled, layoutAlias: layout });
  log('info', 'template added', { account, alias: input.alias });
  return { template: templateView(head, [version]), version: 1 };
}

export async function updateTemplate(
  input: TemplateUpdateRequest,
  account: string,
  dryRun: boolean,
): Promise<WriteResult> {
  const changesParts = [input.subject, input.html, input.text, input.layout_alias].some(
    (value) => value !== undefined,
  );
  return retried(async () => {
    const head = await requireHead(account, input.alias);
    const versions = await listVersions(head.templateId);
    const at = new Date().toISOString();
    const name = input.name ?? head.name;
    if (!changesParts) {
      const renamed = { ...head, name, updatedAt: at };
      if (dryRun) return { template: templateView(renamed, versions), version: null, dry_run: true as const };
      if ((await renameTemplate(head, name, at)) === 'conflict') return 'conflict';
      return { template: templateView(renamed, versions), version: null };
    }
    const latest = await requireVersion(head, head.latestVersion);
    const base = (await compiledVersion(head, latest)).parts;
    const parts: TemplateParts = {
      subject: input.subject ?? base.subject,
      html: input.html !== undefined ? input.html : base.html,
      text: input.text !== undefined ? input.text : base.text,
    };
    const layout = input.layout_alias !== undefined ? input.layout_alias : latest.layoutAlias;
    const compiled = checkParts(parts);
    await requireLayout(account, layout);
    const next = head.latestVersion + 1;
    const version: VersionRecord = {
      version: next,
      createdAt: at,
      layoutAlias: layout,
      objectKey: templateKeys.object(head.templateId, next),
      bytes: compiled.bytes,
    };
    const pruneNumber = versionToPrune(head, versions);
    const prune = versions.find((entry) => entry.version === pruneNumber);
    const after = { ...head, name, latestVersion: next, latestLayout: layout, updatedAt: at };
    const kept = [...versions.filter((entry) => entry !== prune), version];
    if (dryRun) return { template: templateView(after, kept), version: next, dry_run: true as const };
    await putParts(version.objectKey, parts);
    const outcome = await addVersion(head, version, {
      name,
      ...(prune === undefined ? {} : { prune }),
    }).catch(dropPartsUnlessUnsure(version));
    if (outcome === 'conflict') {
      await dropParts([version.objectKey]);
      return 'conflict';
    }
    if (prune !== undefined) await dropParts([prune.objectKey]);
    compiledTemplates.set(cacheKey(head, next, ''), { ...compiled, layoutAlias: layout });
    log('info', 'template version added', { account, alias: head.alias, version: next });
    return { template: templateView(after, kept), version: next };
  });
}

export async function publishTemplate(
  input: TemplatePublishRequest,
  account: string,
  dryRun: boolean,
): Promise<WriteResult> {
  return retried(async () => {
    const head = await requireHead(account, input.alias);
    const number = input.version ?? head.latestVersion;
    const record = await requireVersion(head, number);
    const versions = await listVersions(head.templateId);
    if (record.layoutAlias !== null) {
      // A live version must be sendable: its layout exists and has a live version of its own.
      const layout = await getTemplateHead(account, record.layoutAlias);
      if (layout === undefined || layout.publishedVersion === null) {
        throw new ServiceError(
          Code.MethodValidation,
          layout === undefined
            ? `Version ${number} uses the layout ${record.layoutAlias}, which does not exist`
            : `Version ${number} uses the layout ${record.layoutAlias}, which has no published version: publish it first`,
          { details: [{ field: 'version', message: `Its layout ${record.layoutAlias} cannot be used yet` }] },
        );
      }
    }
    if (head.publishedVersion === number) {
      return {
        template: templateView(head, versions),
        version: number,
        ...(dryRun ? { dry_run: true as const } : {}),
      };
    }
    const at = new Date().toISOString();
    const after: TemplateHead = {
      ...head,
      publishedVersion: number,
      everPublished: [...new Set([...head.everPublished, number])],
      publishedLayout: record.layoutAlias,
      updatedAt: at,
    };
    if (dryRun) return { template: templateView(after, versions), version: number, dry_run: true as const };
    if ((await publishVersion(head, record, at)) === 'conflict') return 'conflict';
    log('info', 'template published', { account, alias: head.alias, version: number });
    return { template: templateView(after, versions), version: number };
  });
}

export async function deleteTemplate(
  input: TemplateDeleteRequest,
  account: string,
  dryRun: boolean,
): Promise<WriteResult & { deleted: true }> {
  return retried(async () => {
    const head = await requireHead(account, input.alias);
    const users = (await allTemplateHeads(account)).filter(
      (other) =>
        other.alias !== head.alias &&
        (other.latestLayout === head.alias || other.publishedLayout === head.alias),
    );
    if (users.length > 0) {
      throw new ServiceError(Code.MethodValidation, `${head.alias} is the layout of other templates`, {
        details: users.slice(0, 50).map((user) => ({
          field: 'alias',
          message: `Used as the layout of ${user.alias} (its latest or published version)`,
        })),
      });
    }
    const versions = await listVersions(head.templateId);
    const answer = { template: templateView(head, versions), version: null, deleted: true as const };
    if (dryRun) return { ...answer, dry_run: true as const };
    if ((await deleteTemplateHead(head)) === 'conflict') return 'conflict';
    // The record is gone, so nothing reaches the versions any more; remove them and their parts.
    try {
      await deleteVersionRecords(head.templateId, versions);
    } catch (error) {
      log('warn', 'template version records left behind', { alias: head.alias, ...describeError(error) });
    }
    await dropParts(versions.map((version) => version.objectKey));
    log('info', 'template deleted', { account, alias: head.alias });
    return answer;
  });
}

// ---------------------------------------------------------------------------------------------
// Query

function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string' && parsed.after.length > 0) return parsed.after;
  } catch {
    // fall through
  }
  throw invalid([{ field: 'cursor', message: 'Not a cursor of this query' }]);
}

const encodeCursor = (after: string) => Buffer.from(JSON.stringify({ after })).toString('base64url');

export async function queryTemplates(input: TemplateQueryRequest, account: string) {
  if (input.alias !== undefined) {
    const head = await requireHead(account, input.alias);
    const record = await requireVersion(head, input.version ?? head.latestVersion);
    const [versions, compiled] = await Promise.all([
      listVersions(head.templateId),
      compiledVersion(head, record),
    ]);
    return {
      template: templateView(head, versions),
      version: {
        version: record.version,
        status: versionStatus(head, record.version),
        created_at: formatDate(record.createdAt),
        subject: compiled.parts.subject,
        html: compiled.parts.html,
        text: compiled.parts.text,
        layout_alias: record.layoutAlias,
      },
    };
  }
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  const page = await listTemplateHeads(account, input.filters?.limit ?? 100, after);
  return {
    templates: page.heads.map(templateSummaryView),
    count: page.heads.length,
    next_cursor: page.lastAlias === undefined ? null : encodeCursor(page.lastAlias),
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** The layout version a version names, as it renders: its published version, else (previews only) its latest. */
async function layoutVersion(
  account: string,
  layoutAlias: string,
  mode: 'send' | 'preview',
  field: string,
  heads: Map<string, Promise<TemplateHead | undefined>> = new Map(),
): Promise<{ head: TemplateHead; version: number }> {
  const head = await readHead(account, layoutAlias, heads);
  if (head === undefined) {
    if (mode === 'preview') throw notFound(layoutAlias, field);
    throw new ServiceError(Code.MethodValidation, `The layout ${layoutAlias} does not exist`, {
      details: [{ field, message: `Its layout ${layoutAlias} was deleted` }],
    });
  }
  const number = head.publishedVersion ?? (mode === 'preview' ? head.latestVersion : null);
  if (number === null) {
    throw new ServiceError(Code.MethodValidation, `The layout ${layoutAlias} has no published version`, {
      details: [{ field, message: `Publish the layout ${layoutAlias} first` }],
    });
  }
  return { head, version: number };
}

/** The layout of a message being sent, compiled (from the cache). */
async function layoutFor(
  account: string,
  layoutAlias: string,
  field: string,
  heads: Map<string, Promise<TemplateHead | undefined>>,
): Promise<{ head: TemplateHead; version: number; compiled: CompiledTemplate }> {
  const { head, version } = await layoutVersion(account, layoutAlias, 'send', field, heads);
  return { head, version, compiled: await compiledVersion(head, version, { prefix: 'layout.', field }) };
}

/**
 * A stored version's text for a preview, without compiling it in this thread: from the compiled
 * cache when the version is there, else its record and parts.
 */
async function versionParts(
  head: TemplateHead,
  number: number,
  prefix: string,
  field?: string,
): Promise<{ key: string; parts: TemplateParts; layoutAlias: string | null }> {
  const key = cacheKey(head, number, prefix);
  const cached = compiledTemplates.get(key);
  if (cached !== undefined) return { key, parts: cached.parts, layoutAlias: cached.layoutAlias ?? null };
  const record = await requireVersion(head, number, field);
  return { key, parts: await getParts(record.objectKey), layoutAlias: record.layoutAlias };
}

/**
 * POST /template/render-1.0: the editor's preview. Problems with the template or the model are
 * answered in `errors` with their part and line; an unknown alias is 112, and a part past its
 * budget (docs/security.md, "Limits") 107 naming it. The parts are compiled and rendered on a
 * preview worker (preview/pool.ts): this thread only reads them.
 */
export async function renderPreview(input: TemplateRenderRequest, account: string) {
  const model = input.model ?? {};
  let job: PreviewJob;
  let layoutAlias: string | null;
  if (input.alias !== undefined) {
    const head = await requireHead(account, input.alias);
    const version = await versionParts(
      head,
      input.version ?? head.publishedVersion ?? head.latestVersion,
      '',
    );
    job = { template: { key: version.key, parts: version.parts }, model };
    layoutAlias = version.layoutAlias;
  } else {
    const parts: TemplateParts = {
      subject: input.subject ?? '',
      html: input.html ?? null,
      text: input.text ?? null,
    };
    job = { template: { parts }, model };
    layoutAlias = input.layout_alias ?? null;
  }
  if (layoutAlias !== null) {
    const layout = await layoutVersion(account, layoutAlias, 'preview', 'layout_alias');
    const parts = await versionParts(layout.head, layout.version, 'layout.', 'layout_alias');
    job.layout = { key: parts.key, parts: parts.parts };
  }
  return rendered(
    () => previewPool().run(job),
    (part) => part,
  );
}

/** The HTML's text alternative when the template has no text part. */
async function withText(html: string | null, text: string | null): Promise<string | null> {
  if (text !== null || html === null) return text;
  return textFromHtml(html);
}

/** A render past its budget (or out of stack) is 107 naming the part, never a 500. */
function rendered<T>(render: () => T, fieldOf: (part: string) => string): T {
  const refusal = (error: unknown): never => {
    if (error instanceof RenderBudgetError) {
      throw new ServiceError(Code.InvalidInput, error.message, {
        details: [{ field: fieldOf(error.part), message: error.message }],
      });
    }
    throw error;
  };
  try {
    const result = render();
    return (result instanceof Promise ? result.catch(refusal) : result) as T;
  } catch (error) {
    return refusal(error);
  }
}

/**
 * How many bytes a message's rendering may take: the message's limit less its attachments, and
 * within a batch what is left of the batch's (its messages count together against the same limit).
 */
export interface RenderAllowance {
  /** Bytes the message's attachments already take of its limit. */
  reserved: number;
  /** What is left of a batch's rendered bytes, shared by its messages. */
  batch?: { remaining: number };
}

/** What a message records of the template it was rendered from. */
export interface TemplateRecord {
  alias: string;
  version: number;
  layout?: { alias: string; version: number };
}

export interface RenderedMessage {
  subject: string;
  content: { kind: 'text_only'; text: string } | { kind: 'mixed'; text: string; html: string };
  template: TemplateRecord;
}

/** A template record, read once for all the messages of one request (a batch) that name it. */
function readHead(
  account: string,
  alias: string,
  heads: Map<string, Promise<TemplateHead | undefined>>,
): Promise<TemplateHead | undefined> {
  let reading = heads.get(alias);
  if (reading === undefined) {
    reading = getTemplateHead(account, alias);
    heads.set(alias, reading);
  }
  return reading;
}

/**
 * Renders the template of a message being accepted (message add and batch items): the published
 * version, or the one named; `heads` shares the template (and layout) records read by one
 * request's messages. A variable the model lacks is 107 naming it, its part and its line; so is a
 * rendering past its budget (statements, or bytes within `allowance`: docs/security.md, "Limits");
 * an unknown alias or version is 112; a template with nothing published is 111.
 */
export async function renderForMessage(
  account: string,
  request: { alias: string; version?: number | undefined; model?: Record<string, unknown> | undefined },
  field = 'template',
  heads: Map<string, Promise<TemplateHead | undefined>> = new Map(),
  allowance: RenderAllowance = { reserved: 0 },
): Promise<RenderedMessage> {
  const head = await readHead(account, request.alias, heads);
  if (head === undefined) throw notFound(request.alias, `${field}.alias`);
  const number = request.version ?? head.publishedVersion;
  if (number === null) {
    throw new ServiceError(Code.MethodValidation, `Template ${head.alias} has no published version`, {
      details: [{ field: `${field}.alias`, message: 'Publish a version, or name one in template.version' }],
    });
  }
  const template = await compiledVersion(head, number, { field: `${field}.version` });
  const layout =
    template.layoutAlias === null
      ? undefined
      : await layoutFor(account, template.layoutAlias, `${field}.alias`, heads);
  const own = maxRenderedBytes - allowance.reserved;
  const shared = allowance.batch?.remaining ?? Number.POSITIVE_INFINITY;
  const maxBytes = Math.max(0, Math.min(own, shared));
  const bytesReason =
    shared < own
      ? `what is left of the ${maxRenderedBytes.toLocaleString('en-US')} bytes the messages of one batch may render to together`
      : allowance.reserved > 0
        ? "a message's subject, HTML, text and attachments together"
        : undefined;
  const rendering = rendered(
    () =>
      renderTemplate(template, request.model ?? {}, layout?.compiled, {
        maxBytes,
        ...(bytesReason === undefined ? {} : { bytesReason }),
      }),
    () => field,
  );
  // Taken from the batch's share now, before anything awaits, so concurrent items see it.
  if (allowance.batch !== undefined) allowance.batch.remaining -= rendering.bytes;
  if (rendering.missing.length > 0 || rendering.problems.length > 0) {
    throw invalid([
      ...rendering.missing.map((entry) => ({
        field: `${field}.model${entry.variable.startsWith('[') ? '' : '.'}${entry.variable}`,
        message: describeMissing(entry),
      })),
      ...rendering.problems.map((problem) => ({ field: `${field}.model`, message: problem.message })),
    ]);
  }
  const text = await withText(rendering.html, rendering.text);
  if (rendering.text === null && text !== null) {
    const derived = Buffer.byteLength(text);
    if (allowance.batch !== undefined) allowance.batch.remaining -= derived;
    if (rendering.bytes + derived > maxBytes) {
      const message = `The text part derived from the html part takes the rendered message past ${maxBytes.toLocaleString('en-US')} bytes (${bytesReason ?? 'the subject, HTML and text of a message together'})`;
      throw new ServiceError(Code.InvalidInput, message, { details: [{ field, message }] });
    }
  }
  const recorded: TemplateRecord = { alias: head.alias, version: number };
  if (layout !== undefined) recorded.layout = { alias: layout.head.alias, version: layout.version };
  return {
    subject: rendering.subject,
    content:
      rendering.html === null
        ? { kind: 'text_only', text: text ?? '' }
        : { kind: 'mixed', text: text ?? '', html: rendering.html },
    template: recorded,
  };
}
