/**
 * Bundle alias for `libmime` (infra/bundling.ts). In these bundles libmime is reached only by
 * mailauth's DKIM signer, which calls one function of it, `foldLines`, to fold the
 * DKIM-Signature header. nodemailer, which composes every message the signer signs, ships the
 * same function (libmime and nodemailer's MIME functions share their author and this code; a unit
 * test compares the two), so the signer folds with nodemailer's, and libmime's CommonJS modules
 * (charsets, base64, quoted-printable, the MIME-type table and, through them, iconv-lite and
 * encoding-japanese) are neither bundled nor compiled at a cold start.
 */
export { foldLines } from 'nodemailer/lib/mime-funcs';
