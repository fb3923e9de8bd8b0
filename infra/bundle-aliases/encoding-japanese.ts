/**
 * Bundle alias for `encoding-japanese` (infra/bundling.ts; 225 KB of tables in the sender). libmime
 * tries it first for ISO-2022-JP and EUC-JP and, when it throws, decodes through iconv-lite, which in
 * these bundles is Node's TextDecoder (see iconv-lite.ts), which handles both charsets.
 */
export function convert(): never {
  throw new Error('encoding-japanese is not bundled; decoding through TextDecoder');
}

export default { convert };
