// The HTML pieces the report's sections share: escaping and tables.

export function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export interface Column {
  label: string;
  /** Left-aligned (text) rather than right-aligned (a number). */
  text?: boolean;
}

export interface Cell {
  text: string;
  className?: string;
}

/** A table; `cards`: one card per row on a narrow page, each value after its column's name. */
export function tableHtml(columns: Array<string | Column>, rows: Array<Array<string | Cell>>, cards = false): string {
  const cols = columns.map((c) => (typeof c === 'string' ? { label: c } : c));
  const head = cols.map((c) => `<th${c.text ? ' class="text"' : ''}>${esc(c.label)}</th>`).join('');
  const body = rows
    .map((row) => {
      const cells = row.map((raw, i) => {
        const cell = typeof raw === 'string' ? { text: raw } : raw;
        const classes = [cols[i]?.text ? 'text' : '', cell.className ?? ''].filter(Boolean).join(' ');
        const label = cards ? ` data-label="${esc(cols[i]?.label ?? '')}"` : '';
        return `<td${classes ? ` class="${classes}"` : ''}${label}>${esc(cell.text)}</td>`;
      });
      return `<tr>${cells.join('')}</tr>`;
    })
    .join('');
  return `<table${cards ? ' class="cards"' : ''}><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}
