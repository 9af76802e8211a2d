import type { ReactNode } from 'react';

/** A column's heading, right-aligned when the column holds numbers. */
export interface Column {
  label: ReactNode;
  numeric?: boolean;
  /** Needed when the label is not a string. */
  key?: string;
}

/** A column of numbers. */
export const numeric = (label: string): Column => ({ label, numeric: true });

/** The heading row of a table: one column heading per column; a string is a column of text. */
export function TableHead({ columns }: { columns: (string | Column)[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const { label, numeric: isNumber, key } = typeof column === 'string' ? { label: column } : column;
          return (
            <th key={key ?? String(label)} scope="col" className={isNumber ? 'number' : undefined}>
              {label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

interface CellProps {
  /** The column's heading: a `table--cards` table shows it beside the value once a row becomes a card (phones). */
  label: string;
  numeric?: boolean;
  className?: string;
  children: ReactNode;
}

/** A cell of a `table--cards` table. */
export function Cell({ label, numeric: isNumber, className, children }: CellProps) {
  const classes = [isNumber ? 'number' : '', className ?? ''].filter(Boolean).join(' ');
  return (
    <td data-label={label} className={classes || undefined}>
      {children}
    </td>
  );
}
