/**
 * The text alternative of an HTML body, by html-to-text (imported on first use: only HTML-only
 * messages and templates without a text part need it). Its own module, so that the template path
 * of message add derives text without loading the MIME composer. Links keep their address in brackets, images are left out, headings keep their
 * case, lines wrap at 78.
 */
export async function textFromHtml(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: 78,
    selectors: [
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'title', format: 'skip' },
      // Headings keep their letters: upper-casing changes words in many languages (ß → SS).
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({
        selector,
        options: { uppercase: false },
      })),
      // Tables as aligned columns rather than run-together cell text.
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}
