import { OrderEntity, UserEntity } from '@flash-sale/db';
import { DomainError, ErrorCode, ORDER_STATUSES, type OrderStatus } from '@flash-sale/domain';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { SaleCatalog } from '../sales/sale-catalog';
import { type OrderView, orderViewOfRow } from './order.view';

/** An order as the admin console lists it: the contract's Order plus the buyer's account name, if any. */
export interface AdminOrderView extends OrderView {
  userName: string | null;
}

export interface AdminOrderQuery {
  status?: string;
  q?: string;
  cursor?: string;
  limit?: string;
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;
/** The CSV is read in pages of this many rows, so a big sale never sits in one result set. */
const CSV_BATCH = 1_000;
const CURSOR_PATTERN = /^[1-9][0-9]{0,19}$/;

/**
 * The orders of one sale for its admin: newest first, filtered by status, searched by order number
 * (prefix), user id or account name (exact), in keyset pages (`next` = the last row's id), and as CSV.
 * Only written rows are listed: a reservation still QUEUED has no row yet (the dashboard counts those).
 */
@Injectable()
export class AdminOrdersService {
  constructor(
    @InjectRepository(OrderEntity) private readonly orders: Repository<OrderEntity>,
    private readonly catalog: SaleCatalog,
  ) {}

  async list(saleId: string, query: AdminOrderQuery): Promise<{ items: AdminOrderView[]; next?: string }> {
    const sale = await this.catalog.get(saleId); // 404 SALE_NOT_FOUND first
    const limit = parseLimit(query.limit);
    const builder = this.baseQuery(sale.id);
    if (query.status !== undefined && query.status !== '') {
      if (!(ORDER_STATUSES as readonly string[]).includes(query.status)) {
        throw new DomainError(ErrorCode.ValidationFailed, `status must be one of ${ORDER_STATUSES.join(', ')}`);
      }
      builder.andWhere('o.status = :status', { status: query.status as OrderStatus });
    }
    const q = query.q?.trim();
    if (q) {
      if (q.length > 64) throw new DomainError(ErrorCode.ValidationFailed, 'q must be at most 64 characters');
      builder.andWhere('(o.order_no LIKE :prefix OR o.user_id = :q OR u.name = :q)', {
        prefix: `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
        q,
      });
    }
    if (query.cursor !== undefined && query.cursor !== '') {
      if (!CURSOR_PATTERN.test(query.cursor)) throw new DomainError(ErrorCode.ValidationFailed, 'cursor is invalid');
      builder.andWhere('o.id < :cursor', { cursor: query.cursor });
    }
    const rows = await builder.take(limit + 1).getRawAndEntities();
    const page = rows.entities.slice(0, limit);
    const items = page.map((order) => this.view(order, rows.raw));
    const last = page[page.length - 1];
    return rows.entities.length > limit && last ? { items, next: last.id } : { items };
  }

  /** Every written order of the sale, oldest first, as RFC 4180 CSV lines (header first). */
  async *csv(saleId: string): AsyncGenerator<string> {
    const sale = await this.catalog.get(saleId);
    yield csvLine([
      'orderNo',
      'saleId',
      'userId',
      'userName',
      'quantity',
      'amountCents',
      'status',
      'createdAt',
      'expiresAt',
      'paidAt',
    ]);
    let after = '0';
    for (;;) {
      const rows = await this.baseQuery(sale.id, 'ASC')
        .andWhere('o.id > :after', { after })
        .take(CSV_BATCH)
        .getRawAndEntities();
      for (const order of rows.entities) {
        const view = this.view(order, rows.raw);
        yield csvLine([
          view.orderNo,
          view.saleId,
          view.userId,
          view.userName ?? '',
          String(view.quantity),
          String(view.amountCents),
          view.status,
          view.createdAt,
          view.expiresAt ?? '',
          view.paidAt ?? '',
        ]);
      }
      const last = rows.entities[rows.entities.length - 1];
      if (!last || rows.entities.length < CSV_BATCH) return;
      after = last.id;
    }
  }

  private baseQuery(saleId: string, direction: 'ASC' | 'DESC' = 'DESC'): SelectQueryBuilder<OrderEntity> {
    return this.orders
      .createQueryBuilder('o')
      .leftJoin(UserEntity, 'u', 'u.id = o.user_id')
      .addSelect('u.name', 'user_name')
      .where('o.sale_id = :saleId', { saleId })
      .orderBy('o.id', direction);
  }

  private view(order: OrderEntity, raw: Array<Record<string, unknown>>): AdminOrderView {
    const row = raw.find((r) => String(r['o_id']) === order.id);
    const name = row?.['user_name'];
    return { ...orderViewOfRow(order), userName: typeof name === 'string' ? name : null };
  }
}

function parseLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return DEFAULT_PAGE;
  const value = Number(limit);
  if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE) {
    throw new DomainError(ErrorCode.ValidationFailed, `limit must be an integer from 1 to ${MAX_PAGE}`);
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
