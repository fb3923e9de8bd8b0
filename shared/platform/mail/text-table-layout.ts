/**
 * The text layout of an HTML table in a text alternative (./text-from-html.ts): cells as aligned
 * columns, honouring colspan and rowspan, in time and memory linear in the cells and the output.
 * It replaces html-to-text's own table printer, whose work grows with the square of the rows or
 * columns (docs/security.md, "Limits"). A table too wide to align within the budgets below is
 * written row by row, cells separated by the column spacing, without alignment.
 */

/** A cell as html-to-text hands it over: its text (already wrapped) and its spans. */
export interface TableCell {
  text: string;
  colspan: number;
  rowspan: number;
}

export const tableLayoutLimits = {
  /** Aligned columns at most; a wider table is written row by row. */
  columns: 200,
  /** The largest colspan and rowspan honoured (the HTML standard's bounds); larger ones are clamped. */
  colspan: 1000,
  rowspan: 65_534,
  /** An aligned table's text is at most this many times its cells' text, plus `alignedSlack` characters. */
  alignedRatio: 8,
  alignedSlack: 65_536,
} as const;

interface Placed {
  lines: string[];
  width: number;
  row: number;
  column: number;
  rowspan: number;
  colspan: number;
}

const clampSpan = (value: number, max: number) =>
  Number.isFinite(value) && value >= 1 ? Math.min(Math.floor(value), max) : 1;

/**
 * Offsets of each column (or row) start: each at least the previous one, and far enough after the
 * start of every cell that ends there to hold it. `ends[i]` lists the cells ending before index i.
 */
function offsetsOf(count: number, ends: Array<Array<{ start: number; size: number }>>): number[] {
  const offsets = new Array<number>(count + 1).fill(0);
  for (let index = 1; index <= count; index++) {
    let offset = offsets[index - 1] as number;
    for (const cell of ends[index] ?? [])
      offset = Math.max(offset, (offsets[cell.start] as number) + cell.size);
    offsets[index] = offset;
  }
  return offsets;
}

/** Places the cells on the grid; undefined when the table is wider than `tableLayoutLimits.columns`. */
function place(rows: readonly (readonly TableCell[])[]): Placed[] | undefined {
  const placed: Placed[] = [];
  // The row until which each column is still taken by a cell from a row above (rowspan).
  const takenUntil: number[] = [];
  for (const [row, cells] of rows.entries()) {
    let column = 0;
    for (const cell of cells) {
      while ((takenUntil[column] ?? 0) > row) column++;
      const colspan = clampSpan(cell.colspan, tableLayoutLimits.colspan);
      if (column + colspan > tableLayoutLimits.columns) return undefined;
      const rowspan = Math.min(clampSpan(cell.rowspan, tableLayoutLimits.rowspan), rows.length - row);
      for (let taken = column; taken < column + colspan; taken++) takenUntil[taken] = row + rowspan;
      const lines = cell.text.split('\n');
      let width = 0;
      for (const line of lines) width = Math.max(width, line.length);
      placed.push({ lines, width, row, column, rowspan, colspan });
      column += colspan;
    }
  }
  return placed;
}

/** Rows one per line (a multi-line cell joined by spaces), cells separated by `colSpacing` spaces. */
function unaligned(rows: readonly (readonly TableCell[])[], colSpacing: number): string {
  const gap = ' '.repeat(colSpacing);
  return rows.map((cells) => cells.map((cell) => cell.text.replace(/\n+/g, ' ')).join(gap)).join('\n');
}

export function tableToText(
  rows: readonly (readonly TableCell[])[],
  rowSpacing: number,
  colSpacing: number,
): string {
  const placed = place(rows);
  if (placed === undefined) return unaligned(rows, colSpacing);

  let columnCount = 0;
  let cellText = 0;
  const columnEnds: Array<Array<{ start: number; size: number }>> = [];
  const rowEnds: Array<Array<{ start: number; size: number }>> = [];
  const addEnd = (ends: typeof columnEnds, at: number, entry: { start: number; size: number }) => {
    const list = ends[at];
    if (list === undefined) ends[at] = [entry];
    else list.push(entry);
  };
  for (const cell of placed) {
    const columnEnd = cell.column + cell.colspan;
    columnCount = Math.max(columnCount, columnEnd);
    cellText += cell.width * cell.lines.length + colSpacing;
    addEnd(columnEnds, columnEnd, { start: cell.column, size: cell.width + colSpacing });
    const rowEnd = cell.row + cell.rowspan;
    addEnd(rowEnds, rowEnd, { start: cell.row, size: cell.lines.length + rowSpacing });
  }
  const columnOffsets = offsetsOf(columnCount, columnEnds);
  const rowOffsets = offsetsOf(rows.length, rowEnds);

  // Each output line's pieces (column offset, text), checked against the budget before any text is built.
  const lineCount = rowOffsets[rows.length] as number;
  const pieces: Array<Array<{ at: number; text: string }>> = Array.from({ length: lineCount }, () => []);
  const lineEnds = new Array<number>(lineCount).fill(0);
  for (const cell of placed) {
    const at = columnOffsets[cell.column] as number;
    for (const [index, text] of cell.lines.entries()) {
      (pieces[(rowOffsets[cell.row] as number) + index] as Array<{ at: number; text: string }>).push({
        at,
        text,
      });
      const line = (rowOffsets[cell.row] as number) + index;
      lineEnds[line] = Math.max(lineEnds[line] as number, at + text.length);
    }
  }
  let outputSize = 0;
  for (const end of lineEnds) outputSize += end + 1;
  if (outputSize > cellText * tableLayoutLimits.alignedRatio + tableLayoutLimits.alignedSlack) {
    return unaligned(rows, colSpacing);
  }
  return pieces
    .map((line) => {
      line.sort((a, b) => a.at - b.at);
      let text = '';
      for (const piece of line) text = text.padEnd(piece.at) + piece.text;
      return text;
    })
    .join('\n');
}
