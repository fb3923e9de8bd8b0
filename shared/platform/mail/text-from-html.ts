import type { FormatCallback } from 'html-to-text';
import { maxElementDepth } from './html-open-elements.ts';
import { type TableCell, tableToText } from './text-table-layout.ts';

/**
 * The text alternative of an HTML body, by html-to-text (imported on first use: only HTML-only
 * messages and templates without a text part need it). Its own module, so that the template path
 * of message add derives text without loading the MIME composer. Links keep their address in brackets, images are left out, headings keep their
 * case, lines wrap at 78.
 *
 * Bounded (docs/security.md, "Limits"): the input's length and its element depth are checked
 * before any parsing (./html-open-elements.ts: the parser's work grows with the square of the
 * depth, and the walk would run into a stack overflow), the walk itself stops at the same depth,
 * and tables are laid out in linear time (./text-table-layout.ts). Past a limit it
 * throws `HtmlToTextLimitError`, which callers answer as 107 naming their field.
 */
export const htmlToTextLimits = {
  /** Characters of HTML converted at most. */
  inputLength: 2 * 1024 * 1024,
  /** Nested elements at most. */
  depth: 256,
} as const;

export class HtmlToTextLimitError extends Error {
  override readonly name = 'HtmlToTextLimitError';
}

/**
 * What html-to-text writes where the depth limit cuts the walk: a string no HTML text yields
 * (control characters around a word), so finding it in the output means the limit was reached.
 */
const depthMarker = '\u0001depth-limit\u0001';

type Converter = (html: string) => string;
let converter: Converter | undefined;

async function loadConverter(): Promise<Converter> {
  const { compile } = await import('html-to-text');
  // html-to-text's dataTable walk with a linear table printer.
  const linearTable: FormatCallback = (elem, walk, builder, formatOptions) => {
    builder.openTable();
    const cell = (node: typeof elem) => {
      const colspan = Number(node.attribs?.colspan) || 1;
      const rowspan = Number(node.attribs?.rowspan) || 1;
      builder.openTableCell({ maxColumnWidth: formatOptions.maxColumnWidth });
      walk(node.children, builder);
      builder.closeTableCell({ colspan, rowspan });
    };
    const walkTable = (node: typeof elem): void => {
      if (node.type !== 'tag') return;
      if (['thead', 'tbody', 'tfoot', 'center'].includes(node.name ?? '')) {
        for (const child of node.children ?? []) walkTable(child);
        return;
      }
      if (node.name !== 'tr') return;
      builder.openTableRow();
      for (const child of node.children ?? []) {
        if (child.type === 'tag' && (child.name === 'td' || child.name === 'th')) cell(child);
      }
      builder.closeTableRow();
    };
    for (const child of elem.children ?? []) walkTable(child);
    builder.closeTable({
      tableToString: (rows: TableCell[][]) =>
        tableToText(rows, formatOptions.rowSpacing ?? 0, formatOptions.colSpacing ?? 3),
      ...(formatOptions.leadingLineBreaks === undefined
        ? {}
        : { leadingLineBreaks: formatOptions.leadingLineBreaks }),
      ...(formatOptions.trailingLineBreaks === undefined
        ? {}
        : { trailingLineBreaks: formatOptions.trailingLineBreaks }),
    });
  };
  return compile({
    wordwrap: 78,
    limits: { maxDepth: htmlToTextLimits.depth, ellipsis: depthMarker, maxInputLength: undefined },
    formatters: { linearTable },
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
      { selector: 'table', format: 'linearTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}

export async function textFromHtml(html: string): Promise<string> {
  if (html.length > htmlToTextLimits.inputLength) {
    throw new HtmlToTextLimitError(
      `HTML to convert to text is at most ${htmlToTextLimits.inputLength} characters; this one has ${html.length}`,
    );
  }
  if (maxElementDepth(html) > htmlToTextLimits.depth) {
    throw new HtmlToTextLimitError(
      `HTML to convert to text nests elements at most ${htmlToTextLimits.depth} deep`,
    );
  }
  converter ??= await loadConverter();
  const text = converter(html);
  if (text.includes(depthMarker)) {
    throw new HtmlToTextLimitError(
      `HTML to convert to text nests elements at most ${htmlToTextLimits.depth} deep`,
    );
  }
  return text;
}
