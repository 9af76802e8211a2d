export * from './entities/sale.entity';
export * from './entities/order.entity';
export * from './data-source';
export * from './duplicate-key';
