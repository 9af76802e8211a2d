import type { Page } from 'playwright-core';

/** What a table looks like on the screen: does it fit its box, is every column in sight, is a row a card. */
export interface TableFit {
  /** The table's full width, and the width its box (`.table-wrap`) shows without scrolling. */
  scrollWidth: number;
  clientWidth: number;
  /** Column headings, body cells, links and buttons whose box leaves the table's box or the window, or has no size. */
  outOfSight: string[];
  /** Cells whose content is wider than the cell (cut, or spilling over the next one). */
  overflowingCells: string[];
  /** How many column headings are shown (0 when a phone card layout hides the heading row). */
  shownHeadings: number;
  bodyCells: number;
  /** Per body row: `card` when it is one block with its cells stacked, each named by its column's label. */
  rowLayouts: ('card' | 'row')[];
}

/**
 * Measures the table matched by `selector` in the page. Written as page source (the test's TypeScript has no
 * DOM types): it runs inside Chromium, against the laid-out page.
 */
const MEASURE_TABLE = `(selector) => {
  const table = document.querySelector(selector);
  if (!table) throw new Error('no table matches ' + selector);
  const box = table.closest('.table-wrap') || table.parentElement;
  const bounds = box.getBoundingClientRect();
  const windowWidth = document.documentElement.clientWidth;
  const name = (element) => {
    const row = element.closest('tr');
    const rowIndex = row ? Array.prototype.indexOf.call(row.parentElement.children, row) : -1;
    const label = element.getAttribute('data-label') || (element.textContent || '').trim().slice(0, 40);
    return element.tagName.toLowerCase() + ' ' + (element.closest('thead') ? 'heading' : 'row ' + rowIndex) + ' "' + label + '"';
  };
  const outOfSight = [];
  const overflowingCells = [];
  const inSight = (element) => {
    const r = element.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    return r.left >= bounds.left - 0.5 && r.right <= bounds.right + 0.5 && r.left >= -0.5 && r.right <= windowWidth + 0.5;
  };
  // A phone's cards hide the heading row (1 px, clipped); the headings inside it keep their size.
  const headingRowShown = table.tHead && table.tHead.getBoundingClientRect().width > 1;
  const shown = headingRowShown ? Array.from(table.tHead.querySelectorAll('th')) : [];
  for (const th of shown) if (!inSight(th)) outOfSight.push(name(th));
  const cells = Array.from(table.querySelectorAll('tbody th, tbody td'));
  for (const cell of cells) {
    // A cell with nothing in it (no action for this row) may take no room at all.
    if (cell.childNodes.length === 0) continue;
    if (!inSight(cell)) outOfSight.push(name(cell));
    if (cell.scrollWidth > cell.clientWidth + 1) overflowingCells.push(name(cell) + ' ' + cell.scrollWidth + '>' + cell.clientWidth);
  }
  for (const control of table.querySelectorAll('tbody a, tbody button')) {
    if (!inSight(control)) outOfSight.push(name(control));
  }
  const rowLayouts = Array.from(table.querySelectorAll('tbody tr')).map((row) => {
    if (getComputedStyle(row).display !== 'block') return 'row';
    const rowBox = row.getBoundingClientRect();
    const tds = Array.from(row.querySelectorAll('td')).filter((td) => td.childNodes.length > 0);
    // A card: the row spans the table, its cells one under the other, each led by its column's label.
    const stacked = tds.every((td, i) => i === 0 || td.getBoundingClientRect().top >= tds[i - 1].getBoundingClientRect().bottom - 0.5);
    const labelled = tds.every((td) => getComputedStyle(td, '::before').content === JSON.stringify(td.getAttribute('data-label') || ''));
    return stacked && labelled && rowBox.width >= bounds.width - 2 ? 'card' : 'row';
  });
  return {
    scrollWidth: table.scrollWidth,
    clientWidth: box.clientWidth,
    outOfSight,
    overflowingCells,
    shownHeadings: shown.length,
    bodyCells: cells.length,
    rowLayouts,
  };
}`;

export function measureTable(page: Page, selector: string): Promise<TableFit> {
  return page.evaluate<TableFit>(`(${MEASURE_TABLE})(${JSON.stringify(selector)})`);
}

/** The page's width against the window's: wider means the page scrolls sideways. */
export function pageWidth(page: Page): Promise<{ scrollWidth: number; windowWidth: number }> {
  return page.evaluate<{ scrollWidth: number; windowWidth: number }>(
    `({ scrollWidth: document.documentElement.scrollWidth, windowWidth: document.documentElement.clientWidth })`,
  );
}

/** A chart's tick labels that the chart cuts (outside its SVG) or the window hides; `texts` are all its labels. */
export function chartLabels(
  page: Page,
  selector: string,
): Promise<{ texts: string[]; cut: string[]; overlapping: string[] }> {
  return page.evaluate<{ texts: string[]; cut: string[]; overlapping: string[] }>(`((selector) => {
    const chart = document.querySelector(selector);
    if (!chart) throw new Error('no chart matches ' + selector);
    // The chart's drawing: what lies outside it is not drawn (the SVG's overflow is hidden).
    const wrapper = chart.querySelector('.recharts-wrapper');
    if (!wrapper) return { texts: [], cut: [], overlapping: [] }; // not drawn yet
    const frame = wrapper.getBoundingClientRect();
    const windowWidth = document.documentElement.clientWidth;
    // The vertical axis's labels: recharts draws them in a layer of their own, or inside the axis.
    const labels = Array.from(chart.querySelectorAll(
      '.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value, .recharts-yAxis .recharts-cartesian-axis-tick-value',
    ));
    const boxes = labels.map((label) => label.getBoundingClientRect());
    const cut = [];
    const overlapping = [];
    labels.forEach((label, i) => {
      const r = boxes[i];
      if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.left < 0 || r.right > windowWidth) {
        cut.push(label.textContent + ' [' + Math.round(r.left) + ', ' + Math.round(r.right) + '] outside [' + Math.round(frame.left) + ', ' + Math.round(frame.right) + ']');
      }
      for (let j = i + 1; j < labels.length; j++) {
        const o = boxes[j];
        if (r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom) overlapping.push(label.textContent + ' / ' + labels[j].textContent);
      }
    });
    return { texts: labels.map((label) => label.textContent), cut, overlapping };
  })(${JSON.stringify(selector)})`);
}

/** A bar chart's drawn bars (of some height) and its vertical axis's labels: what the dashboard's chart shows. */
export function barChart(page: Page, selector = '.rate-chart'): Promise<{ bars: number; ticks: string[] }> {
  return page.evaluate<{ bars: number; ticks: string[] }>(`((selector) => {
    const chart = document.querySelector(selector);
    if (!chart) throw new Error('no chart matches ' + selector);
    const bars = Array.from(chart.querySelectorAll('.recharts-bar-rectangle path'))
      .filter((bar) => bar.getBoundingClientRect().height > 0).length;
    const ticks = Array.from(chart.querySelectorAll(
      '.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value, .recharts-yAxis .recharts-cartesian-axis-tick-value',
    )).map((tick) => (tick.textContent || '').trim());
    return { bars, ticks };
  })(${JSON.stringify(selector)})`);
}

/** A line chart's drawn lines: curves that join at least two points and take some room. */
export function drawnLines(page: Page, selector: string): Promise<number> {
  return page.evaluate<number>(`((selector) => {
    const chart = document.querySelector(selector);
    if (!chart) throw new Error('no chart matches ' + selector);
    return Array.from(chart.querySelectorAll('svg path.recharts-line-curve')).filter(
      (line) => (line.getAttribute('d') || '').includes('L') && line.getBoundingClientRect().width > 0,
    ).length;
  })(${JSON.stringify(selector)})`);
}

/** What of a box's content the window does not show: parts outside it, and parts wider than their own box. */
export interface BoxFit {
  /** The box's right edge against the window's width. */
  right: number;
  windowWidth: number;
  /** Descendants with a size whose box leaves the window sideways. */
  outOfSight: string[];
  /** Descendants whose content is wider than they are (cut, or spilling). */
  overflowing: string[];
}

/** Measures the element matched by `selector` and everything in it, in the laid-out page. */
export function boxFit(page: Page, selector: string): Promise<BoxFit> {
  return page.evaluate<BoxFit>(`((selector) => {
    const box = document.querySelector(selector);
    if (!box) throw new Error('no element matches ' + selector);
    const windowWidth = document.documentElement.clientWidth;
    const name = (element) => element.tagName.toLowerCase() + ' "' + (element.textContent || '').trim().slice(0, 40) + '"';
    const outOfSight = [];
    const overflowing = [];
    for (const element of [box, ...box.querySelectorAll('*')]) {
      const r = element.getBoundingClientRect();
      // Inline boxes have no scroll size of their own; their block parents are measured.
      if (r.width < 1 || r.height < 1 || getComputedStyle(element).display === 'inline') continue;
      if (r.left < -0.5 || r.right > windowWidth + 0.5) outOfSight.push(name(element));
      if (element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflowX !== 'hidden') {
        overflowing.push(name(element) + ' ' + element.scrollWidth + '>' + element.clientWidth);
      }
    }
    return { right: box.getBoundingClientRect().right, windowWidth, outOfSight, overflowing };
  })(${JSON.stringify(selector)})`);
}
