/**
 * The `subject` filter of a query: a case-insensitive "contains" over the subject as stored. The
 * text is compared after Unicode case folding (lower case of NFKC), so `Ä`, `ä` and a decomposed
 * `a` + umlaut all match. Pure.
 */
const fold = (text: string) => text.normalize('NFKC').toLowerCase();

export function subjectMatcher(text: string): (subject: string | undefined) => boolean {
  const needle = fold(text.trim());
  return (subject) => subject !== undefined && fold(subject).includes(needle);
}
