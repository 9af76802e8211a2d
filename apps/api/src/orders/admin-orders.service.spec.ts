import type {
  OrderEntity,
  OrderQueryRepository,
  OrderWithBuyerName,
  ReplicaReads,
  SaleOrdersFilter,
} from '@flash-sale/db';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import type { SaleCatalog } from '../sales/sale-catalog';
import { AdminOrdersService } from './admin-orders.service';

/** Orders 1..n of sale 5, newest = highest id; the fake applies the filter the service passes. */
function ordersOfSale(count: number) {
  const rows: OrderWithBuyerName[] = Array.from({ length: count }, (_, i) => ({
    order: {
      id: String(i + 1),
      orderNo: `5-${i + 1}`,
      saleId: '5',
      userId: `u${i + 1}`,
      quantity: 1,
      amountCents: 100,
      status: i % 2 ? 'PAID' : 'PENDING_PAYMENT',
      reservedAt: new Date(0),
      createdAt: new Date(0),
      expiresAt: null,
      paidAt: null,
      failureReason: null,
    } as unknown as OrderEntity,
    userName: i === 0 ? '=cmd' : null,
    guest: i !== 0,
  }));
  const filters: SaleOrdersFilter[] = [];
  const repository = {
    salePage: async (_saleId: string, filter: SaleOrdersFilter, limit: number) => {
      filters.push(filter);
      return rows
        .filter(({ order }) => !filter.beforeId || Number(order.id) < Number(filter.beforeId))
        .filter(({ order }) => !filter.status || order.status === filter.status)
        .reverse()
        .slice(0, limit);
    },
  } as unknown as OrderQueryRepository;
  const catalog = { get: async (saleId: string) => ({ id: saleId }) } as unknown as SaleCatalog;
  const replicaReads = { laggingOrders: async () => repository } as unknown as ReplicaReads;
  return { service: new AdminOrdersService(replicaReads, catalog), filters };
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof DomainError ? error.code : error),
  );

describe('AdminOrdersService', () => {
  it('pages newest first with a cursor that resumes after the last row', async () => {
    const { service } = ordersOfSale(5);
    const first = await service.list('5', { limit: '2' });
    expect(first.items.map((item) => item.orderNo)).toEqual(['5-5', '5-4']);
    expect(first.next).toBe('4');
    const last = await service.list('5', { limit: '2', cursor: '2' });
    expect(last.items.map((item) => item.orderNo)).toEqual(['5-1']);
    expect(last.next).toBeUndefined();
  });

  it('passes a status and a trimmed search to the repository, and refuses what is not one', async () => {
    const { service, filters } = ordersOfSale(3);
    await service.list('5', { status: 'PAID', q: '  ada ' });
    expect(filters[0]).toEqual({ status: 'PAID', search: 'ada' });
    expect(await codeOf(service.list('5', { status: 'SHIPPED' }))).toBe(ErrorCode.ValidationFailed);
    expect(await codeOf(service.list('5', { cursor: '1; DROP TABLE' }))).toBe(ErrorCode.ValidationFailed);
    expect(await codeOf(service.list('5', { limit: '201' }))).toBe(ErrorCode.ValidationFailed);
    expect(await codeOf(service.list('5', { q: 'x'.repeat(65) }))).toBe(ErrorCode.ValidationFailed);
  });

  it('exports every order once, newest first like the page, with formulas defused', async () => {
    const { service } = ordersOfSale(2_500); // more than one export batch
    const lines: string[] = [];
    for await (const line of service.csv('5')) lines.push(line);
    expect(lines).toHaveLength(2_501);
    expect(lines[0]).toBe(
      'orderNo,saleId,userId,userName,guest,quantity,amountCents,status,createdAt,expiresAt,paidAt\r\n',
    );
    expect(lines[1]?.startsWith('5-2500,')).toBe(true);
    expect(lines[2_500]?.startsWith("5-1,5,u1,'=cmd,false,1,100,PENDING_PAYMENT,")).toBe(true);
    expect(new Set(lines).size).toBe(2_501);
  });
});
