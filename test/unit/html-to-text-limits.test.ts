import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import {
  HtmlToTextLimitError,
  htmlToTextLimits,
  textFromHtml,
} from '../../shared/platform/mail/text-from-html.ts';
import { tableLayoutLimits, tableToText } from '../../shared/platform/mail/text-table-layout.ts';

/** The budgets of HTML to text (docs/security.md, "Limits"), each at its edge. */
const padded = (length: number) => {
  const open = '<p>';
  const close = '</p>';
  return open + 'word '.repeat(length).slice(0, length - open.length - close.length) + close;
};
const nested = (depth: number) => `${'<div>'.repeat(depth)}deep${'</div>'.repeat(depth)}`;
const cells = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ text: `c${index}`, colspan: 1, rowspan: 1 }));

describe('HTML to text: input length', () => {
  it(`converts HTML of exactly ${htmlToTextLimits.inputLength} characters`, async () => {
    const html = padded(htmlToTextLimits.inputLength);
    assert.equal(html.length, htmlToTextLimits.inputLength);
    assert.match(await textFromHtml(html), /^word word/);
  });

  it('refuses one character more before any work', async () => {
    await assert.rejects(textFromHtml(padded(htmlToTextLimits.inputLength + 1)), HtmlToTextLimitError);
  });
});

describe('HTML to text: depth', () => {
  it(`converts elements nested ${htmlToTextLimits.depth} deep`, async () => {
    assert.equal((await textFromHtml(nested(htmlToTextLimits.depth))).trim(), 'deep');
  });

  it('refuses one level more, and far deeper HTML without a stack overflow', async () => {
    await assert.rejects(textFromHtml(nested(htmlToTextLimits.depth + 1)), /nests elements at most 256 deep/);
    await assert.rejects(textFromHtml(nested(100_000)), HtmlToTextLimitError);
  });
});

describe('HTML to text: table layout', () => {
  it('aligns columns, with rowspan and colspan', async () => {
    const text = await textFromHtml(
      '<table><tr><th>Item</th><th>Qty</th></tr><tr><td rowspan="2">Teapot</td><td>1</td></tr><tr><td>2</td></tr><tr><td colspan="2">Total</td></tr></table>',
    );
    assert.equal(text, 'Item     Qty\nTeapot   1\n         2\nTotal');
  });

  it(`aligns a table of ${tableLayoutLimits.columns} columns and writes one column more row by row`, () => {
    const widest = tableToText(
      [cells(tableLayoutLimits.columns), [{ text: 'longer cell', colspan: 1, rowspan: 1 }]],
      0,
      3,
    );
    assert.match(widest, /^c0 {12}c1 {3}c2/);
    const wider = tableToText(
      [cells(tableLayoutLimits.columns + 1), [{ text: 'longer cell', colspan: 1, rowspan: 1 }]],
      0,
      3,
    );
    assert.match(wider, /^c0 {3}c1 {3}c2/);
    assert.equal(wider.split('\n')[1], 'longer cell');
  });

  it("clamps spans to the HTML standard and to the table (no grid of the span's size)", () => {
    const text = tableToText(
      [
        [
          { text: 'a', colspan: 1, rowspan: 1_000_000 },
          { text: 'b', colspan: 1, rowspan: 1 },
        ],
        [{ text: 'c', colspan: 1, rowspan: 1 }],
      ],
      0,
      3,
    );
    assert.equal(text, 'a   b\n    c');
    // A colspan past the column budget is written unaligned.
    assert.equal(
      tableToText(
        [
          [
            { text: 'x', colspan: 1_000_000, rowspan: 1 },
            { text: 'y', colspan: 1, rowspan: 1 },
          ],
        ],
        0,
        3,
      ),
      'x   y',
    );
  });

  it('writes a table unaligned when alignment would multiply its text past the budget', () => {
    // One long cell per column on the first row, then many rows that each end in the last column.
    const columns = 50;
    const rows = [
      Array.from({ length: columns }, () => ({ text: 'x'.repeat(200), colspan: 1, rowspan: 1 })),
      ...Array.from({ length: 2000 }, () => [
        ...Array.from({ length: columns - 1 }, () => ({ text: '', colspan: 1, rowspan: 1 })),
        { text: 'y', colspan: 1, rowspan: 1 },
      ]),
    ];
    const text = tableToText(rows, 0, 3);
    assert.ok(text.length < 200 * columns * 4 + 2000 * 200, `${text.length} characters`);
  });
});
