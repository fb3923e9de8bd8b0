import { formatDate } from '../../platform/time/format.ts';

/**
 * Templates as stored and shown (docs/templates.md, docs/data-model.md): a template has an alias,
 * a name and numbered versions; `published_version` is the live one. Every add and update makes a
 * new version (a draft), so no version ever changes once written; publishing points the template at
 * a version, and publishing an older one is the rollback.
 */

export const aliasPattern = /^[a-z0-9_-]{1,100}$/;
export const maxTemplatesPerAccount = 1000;
/** UTF-8 bytes of subject, HTML and text together. */
export const maxVersionBytes = 500 * 1024;
/** A template keeps its newest versions; an update past this removes the oldest unpublished one. */
export const maxVersionsPerTemplate = 100;
export const maxNameLength = 256;

export type VersionStatus = 'draft' | 'published' | 'superseded';

/** The template record (without its versions' bodies). */
export interface TemplateHead {
  accountId: string;
  alias: string;
  name: string;
  /** Random, new for every add: versions and cache entries of a deleted template never mix with a new one of the same alias. */
  templateId: string;
  latestVersion: number;
  publishedVersion: number | null;
  /** Every version that was ever published (the superseded ones and the published one). */
  everPublished: number[];
  /** The layout alias of the latest and of the published version (a layout in use cannot be deleted). */
  latestLayout: string | null;
  publishedLayout: string | null;
  createdAt: string;
  updatedAt: string;
  /** Counts every change of the record: the condition of the next one. */
  revision: number;
}

export interface VersionRecord {
  version: number;
  createdAt: string;
  layoutAlias: string | null;
  /** Where the parts are (S3 key). */
  objectKey: string;
  bytes: number;
}

export function versionStatus(
  head: Pick<TemplateHead, 'publishedVersion' | 'everPublished'>,
  version: number,
): VersionStatus {
  if (head.publishedVersion === version) return 'published';
  return head.everPublished.includes(version) ? 'superseded' : 'draft';
}

/** The `template` object of every write answer and of a query by alias: versions newest first. */
export function templateView(head: TemplateHead, versions: readonly VersionRecord[]) {
  return {
    alias: head.alias,
    name: head.name,
    published_version: head.publishedVersion,
    versions: [...versions]
      .sort((a, b) => b.version - a.version)
      .map((version) => ({
        version: version.version,
        status: versionStatus(head, version.version),
        created_at: formatDate(version.createdAt),
      })),
  };
}

/** One entry of an account's template list. */
export function templateSummaryView(head: TemplateHead) {
  return {
    alias: head.alias,
    name: head.name,
    published_version: head.publishedVersion,
    latest_version: head.latestVersion,
    created_at: formatDate(head.createdAt),
    updated_at: formatDate(head.updatedAt),
  };
}

/** The oldest version an update may remove to stay within `maxVersionsPerTemplate` (never the published one). */
export function versionToPrune(
  head: Pick<TemplateHead, 'publishedVersion'>,
  versions: readonly Pick<VersionRecord, 'version'>[],
): number | undefined {
  if (versions.length < maxVersionsPerTemplate) return undefined;
  return versions
    .map((entry) => entry.version)
    .filter((version) => version !== head.publishedVersion)
    .sort((a, b) => a - b)[0];
}
