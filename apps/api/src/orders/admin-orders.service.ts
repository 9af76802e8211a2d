import { ADMIN_ORDER_PAGE } from '@flash-sale/contract';
import { type OrderWithBuyerName, ReplicaReads, type SaleOrdersFilter } from '@flash-sale/db';
import { DomainError, ErrorCode, ORDER_STATUSES, type OrderStatus } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { SaleCatalog } from '../sales/sale-catalog';
import { type OrderView, orderViewOfRow } from './order.view';

/** An order as the admin console lists it: the contract's Order plus who bought it. */
export interface AdminOrderView extends OrderView {
  userName: string | null;
  guest: boolean;
}

export interface AdminOrderQuery {
  status?: string;
  q?: string;
  cursor?: string;
  limit?: string;
}

/** The CSV is read in pages of this many rows, so a big sale never sits in one result set. */
const CSV_BATCH = 1_000;
const CURSOR_PATTERN = /^[1-9][0-9]{0,19}$/;

/**
 * The orders of one sale for its admin: newest first, filtered by status, searched by order number
 * (prefix), user id or buyer name (exact; an account's or a guest's), in keyset pages (`next` = the last row's id), and as CSV.
 * Only written rows are listed: a reservation still QUEUED has no row yet (the dashboard counts those).
 * Read from the MySQL replica where there is one (a moment behind the primary: ReplicaReads).
 */
@Injectable()
export class AdminOrdersService {
  constructor(
    private readonly replicaReads: ReplicaReads,
    private readonly catalog: SaleCatalog,
  ) {}

  async list(saleId: string, query: AdminOrderQuery): Promise<{ items: AdminOrderView[]; next?: string }> {
    const sale = await this.catalog.get(saleId); // 404 SALE_NOT_FOUND first
    const limit = parseLimit(query.limit);
    const filter: SaleOrdersFilter = {};
    if (query.status !== undefined && query.status !== '') {
      if (!(ORDER_STATUSES as readonly string[]).includes(query.status)) {
        throw new DomainError(ErrorCode.ValidationFailed, `status must be one of ${ORDER_STATUSES.join(', ')}`);
      }
      filter.status = query.status as OrderStatus;
    }
    const search = query.q?.trim();
    if (search) {
      if (search.length > 64) throw new DomainError(ErrorCode.ValidationFailed, 'q must be at most 64 characters');
      filter.search = search;
    }
    if (query.cursor !== undefined && query.cursor !== '') {
      if (!CURSOR_PATTERN.test(query.cursor)) throw new DomainError(ErrorCode.ValidationFailed, 'cursor is invalid');
      filter.beforeId = query.cursor;
    }
    const rows = await (await this.replicaReads.laggingOrders()).salePage(sale.id, filter, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const items = page.map(adminOrderView);
    return rows.length > limit && last ? { items, next: last.order.id } : { items };
  }

  /** Every written order of the sale, newest first like the page, as RFC 4180 CSV lines (header first). */
  async *csv(saleId: string): AsyncGenerator<string> {
    const sale = await this.catalog.get(saleId);
    yield csvLine([...CSV_COLUMNS]);
    const orders = await this.replicaReads.laggingOrders();
    let beforeId: string | undefined;
    for (;;) {
      const rows = await orders.salePage(sale.id, beforeId ? { beforeId } : {}, CSV_BATCH);
      for (const row of rows) {
        const view = adminOrderView(row);
        yield csvLine(CSV_COLUMNS.map((column) => String(view[column] ?? '')));
      }
      const last = rows[rows.length - 1];
      if (!last || rows.length < CSV_BATCH) return;
      beforeId = last.order.id;
    }
  }
}

/** The export's columns, in order: fields of the admin's order view. */
const CSV_COLUMNS = [
  'orderNo',
  'saleId',
  'userId',
  'userName',
  'guest',
  'quantity',
  'amountCents',
  'status',
  'createdAt',
  'expiresAt',
  'paidAt',
] as const satisfies readonly (keyof AdminOrderView)[];

function adminOrderView({ order, userName, guest }: OrderWithBuyerName): AdminOrderView {
  return { ...orderViewOfRow(order), userName, guest };
}

function parseLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return ADMIN_ORDER_PAGE.defaultSize;
  const value = Number(limit);
  if (!Number.isInteger(value) || value < 1 || value > ADMIN_ORDER_PAGE.maxSize) {
    throw new DomainError(ErrorCode.ValidationFailed, `limit must be an integer from 1 to ${ADMIN_ORDER_PAGE.maxSize}`);
  }
  return value;
}

/**
 * One CSV record. Fields that a spreadsheet would run as a formula (=, +, -, @ first) get a leading
 * apostrophe: an account name is user input, and a CSV opened in a spreadsheet must not execute it.
 */
export function csvLine(fields: string[]): string {
  return (
    fields
      .map((field) => {
        const safe = /^[=+\-@\t\r]/.test(field) ? `'${field}` : field;
        return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
      })
      .join(',') + '\r\n'
  );
}
