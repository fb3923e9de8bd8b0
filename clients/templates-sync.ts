import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SvcMailClient } from './svc-mail.ts';

/**
 * Templates kept in source control (docs/templates.md): a folder with one folder per alias, each
 * holding `subject.hbs`, `body.html.hbs` and/or `body.txt.hbs`, and `template.json`
 * (`{"name", "layout_alias"?}`). `push` makes the account's templates match the folder through the
 * public API: a new alias is added, a changed one gets a new version, and each is published (unless
 * `draft`); `dryRun` reads and validates (the API's own dry run) and changes nothing. `pull` writes
 * the latest version of every template of the account into such a folder.
 */

export const files = {
  subject: 'subject.hbs',
  html: 'body.html.hbs',
  text: 'body.txt.hbs',
  meta: 'template.json',
} as const;

const aliasPattern = /^[a-z0-9_-]{1,100}$/;

export interface LocalTemplate {
  alias: string;
  name: string;
  layout_alias: string | null;
  subject: string;
  html: string | null;
  text: string | null;
}

export type Action = 'create' | 'update' | 'publish' | 'unchanged';

export interface PlannedChange {
  alias: string;
  action: Action;
  /** The version created or published (null in a dry run that would create one). */
  version: number | null;
}

export class SyncError extends Error {}

/** The API's error as one line: `107 Input parameter errors: html: line 2: …`. */
function describeError(error: {
  error?: { code?: number; message?: string; details?: Array<{ field: string; message: string }> };
}): string {
  const body = error.error;
  const details = (body?.details ?? []).map((detail) => `${detail.field}: ${detail.message}`).join('; ');
  return `${body?.code ?? '?'} ${body?.message ?? 'request failed'}${details === '' ? '' : ` (${details})`}`;
}

/** A subject file holds one line; the line break an editor adds at the end is not part of it. */
const subjectOf = (text: string) => text.replace(/\r?\n$/, '');

async function readOptional(path: string): Promise<string | null> {
  return existsSync(path) ? readFile(path, 'utf8') : null;
}

/** Reads every template folder under `dir` (sorted by alias). */
export async function readFolder(dir: string): Promise<LocalTemplate[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const templates: LocalTemplate[] = [];
  for (const entry of entries
    .filter((candidate) => candidate.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const alias = entry.name;
    const folder = join(dir, alias);
    if (!aliasPattern.test(alias))
      throw new SyncError(`${folder}: a folder name is an alias (a-z, 0-9, _ and -)`);
    const metaText = await readOptional(join(folder, files.meta));
    if (metaText === null) throw new SyncError(`${folder}: ${files.meta} is missing`);
    let meta: { name?: unknown; layout_alias?: unknown };
    try {
      meta = JSON.parse(metaText) as typeof meta;
    } catch {
      throw new SyncError(`${join(folder, files.meta)}: not JSON`);
    }
    const unknown = Object.keys(meta).filter((key) => key !== 'name' && key !== 'layout_alias');
    if (unknown.length > 0)
      throw new SyncError(`${join(folder, files.meta)}: unknown field ${unknown.join(', ')}`);
    if (typeof meta.name !== 'string') throw new SyncError(`${join(folder, files.meta)}: "name" is required`);
    if (
      meta.layout_alias !== undefined &&
      meta.layout_alias !== null &&
      typeof meta.layout_alias !== 'string'
    ) {
      throw new SyncError(`${join(folder, files.meta)}: "layout_alias" must be an alias`);
    }
    const subject = await readOptional(join(folder, files.subject));
    templates.push({
      alias,
      name: meta.name,
      layout_alias: (meta.layout_alias as string | null | undefined) ?? null,
      subject: subject === null ? '' : subjectOf(subject),
      html: await readOptional(join(folder, files.html)),
      text: await readOptional(join(folder, files.text)),
    });
  }
  return templates;
}

/** Layouts first, so a template is published after the layout it names. */
function layoutsFirst(templates: LocalTemplate[]): LocalTemplate[] {
  const layouts = new Set(
    templates.map((template) => template.layout_alias).filter((alias) => alias !== null),
  );
  return [
    ...templates.filter((template) => layouts.has(template.alias)),
    ...templates.filter((template) => !layouts.has(template.alias)),
  ];
}

interface RemoteVersion {
  version: number;
  status: string;
  subject: string;
  html: string | null;
  text: string | null;
  layout_alias: string | null;
}

async function remoteTemplate(
  api: SvcMailClient,
  alias: string,
): Promise<{ name: string; published: number | null; latest: RemoteVersion } | undefined> {
  const { data, error, response } = await api.POST('/template/query-1.0', { body: { alias } });
  if (response.status === 404) return undefined;
  if (error !== undefined || data === undefined)
    throw new SyncError(`query ${alias}: ${describeError(error as never)}`);
  const found = data.data as {
    template: { name: string; published_version: number | null };
    version: RemoteVersion;
  };
  return { name: found.template.name, published: found.template.published_version, latest: found.version };
}

const sameParts = (local: LocalTemplate, remote: RemoteVersion) =>
  local.subject === remote.subject &&
  local.html === remote.html &&
  local.text === remote.text &&
  local.layout_alias === remote.layout_alias;

/** One write through the API (a dry run when asked); answers the version it made or would make. */
async function write(
  api: SvcMailClient,
  route: '/template/add-1.0' | '/template/update-1.0',
  body: Record<string, unknown>,
  dryRun: boolean,
): Promise<number | null> {
  const { data, error } = await api.POST(route, {
    params: { query: { dry_run: dryRun } },
    body: body as never,
  });
  if (error !== undefined || data === undefined) {
    throw new SyncError(`${route.slice(10, -4)} ${String(body.alias)}: ${describeError(error as never)}`);
  }
  return data.data.version;
}

/**
 * Pushes a folder: adds new aliases, makes a version of changed ones, and publishes the folder's
 * content (unless `draft`). Templates of the account that the folder does not hold are left alone.
 * Answers what it did, or in a dry run what it would do (the API checks each write as it would).
 */
export async function push(
  api: SvcMailClient,
  dir: string,
  options: { dryRun: boolean; draft: boolean },
): Promise<PlannedChange[]> {
  const changes: PlannedChange[] = [];
  const publishing = async (alias: string, version: number | null) => {
    if (options.draft) return;
    changes.push({ alias, action: 'publish', version });
    if (!options.dryRun && version !== null) await publish(api, alias, version);
  };
  // In a dry run nothing is created: a layout that this push would add is not there to check yet.
  const wouldCreate = new Set<string>();
  for (const local of layoutsFirst(await readFolder(dir))) {
    const parts = {
      subject: local.subject,
      html: local.html,
      text: local.text,
      layout_alias: local.layout_alias,
    };
    const checkedParts =
      options.dryRun && local.layout_alias !== null && wouldCreate.has(local.layout_alias)
        ? { ...parts, layout_alias: null }
        : parts;
    const remote = await remoteTemplate(api, local.alias);
    if (remote === undefined) {
      if (options.dryRun) wouldCreate.add(local.alias);
      const body = Object.fromEntries(
        Object.entries({ alias: local.alias, name: local.name, ...checkedParts }).filter(
          ([, value]) => value !== null,
        ),
      );
      const made = await write(api, '/template/add-1.0', body, options.dryRun);
      changes.push({ alias: local.alias, action: 'create', version: made });
      await publishing(local.alias, made);
      continue;
    }
    const partsChanged = !sameParts(local, remote.latest);
    const renamed = local.name !== remote.name;
    let live = remote.latest.version;
    if (partsChanged || renamed) {
      const made = await write(
        api,
        '/template/update-1.0',
        {
          alias: local.alias,
          ...(renamed ? { name: local.name } : {}),
          ...(partsChanged ? checkedParts : {}),
        },
        options.dryRun,
      );
      changes.push({ alias: local.alias, action: 'update', version: made });
      if (partsChanged && made !== null) live = made;
    }
    if (partsChanged || remote.published !== remote.latest.version) await publishing(local.alias, live);
    else if (!renamed) changes.push({ alias: local.alias, action: 'unchanged', version: live });
  }
  return changes;
}

async function publish(api: SvcMailClient, alias: string, version: number): Promise<void> {
  const { error } = await api.POST('/template/publish-1.0', { body: { alias, version } });
  if (error !== undefined)
    throw new SyncError(`publish ${alias} version ${version}: ${describeError(error as never)}`);
}

/** Pulls the latest version of every template of the account into `dir`. Answers the aliases written. */
export async function pull(api: SvcMailClient, dir: string): Promise<string[]> {
  const aliases: string[] = [];
  let cursor: string | undefined;
  do {
    const { data, error } = await api.POST('/template/query-1.0', {
      body: { filters: { limit: 1000 }, ...(cursor === undefined ? {} : { cursor }) },
    });
    if (error !== undefined || data === undefined)
      throw new SyncError(`list: ${describeError(error as never)}`);
    const page = data.data as { templates: Array<{ alias: string }>; next_cursor: string | null };
    aliases.push(...page.templates.map((template) => template.alias));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  await mkdir(dir, { recursive: true });
  for (const alias of aliases) {
    const remote = await remoteTemplate(api, alias);
    if (remote === undefined) continue; // deleted meanwhile
    const folder = join(dir, alias);
    await mkdir(folder, { recursive: true });
    const meta = {
      name: remote.name,
      ...(remote.latest.layout_alias === null ? {} : { layout_alias: remote.latest.layout_alias }),
    };
    await writeFile(join(folder, files.meta), `${JSON.stringify(meta, null, 2)}\n`);
    await writeFile(join(folder, files.subject), `${remote.latest.subject}\n`);
    for (const part of ['html', 'text'] as const) {
      const content = remote.latest[part];
      if (content === null) await rm(join(folder, files[part]), { force: true });
      else await writeFile(join(folder, files[part]), content);
    }
  }
  return aliases;
}
