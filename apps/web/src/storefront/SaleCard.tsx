import { Link } from 'react-router';
import { type Sale, UNSAFE_STRATEGIES } from '@flash-sale/contract';
import { SaleStatusBadge, StrategyBadge } from '../components/badges';
import { Countdown } from '../components/Countdown';
import { formatMoney } from '../components/format';
import { SaleImage } from './SaleImage';
import { StockMeter } from '../components/StockMeter';

export function SaleCard({ sale }: { sale: Sale }) {
  return (
    <article className="card sale-card">
      <SaleImage sale={sale} className="sale-card__image" />
      <div className="sale-card__body">
        <div className="button-row">
          <SaleStatusBadge status={sale.status} />
          {/* Shoppers see how a sale sells only when it can oversell (the teaching strategy): then it is labelled. */}
          {UNSAFE_STRATEGIES.includes(sale.strategy) && <StrategyBadge strategy={sale.strategy} />}
        </div>
        <h2 className="sale-card__title">
          <Link to={`/sales/${sale.id}`}>{sale.name}</Link>
        </h2>
        {sale.status === 'upcoming' && <Countdown to={sale.startsAt} label="Starts in" done="Opening…" />}
        {sale.status === 'live' && <Countdown to={sale.endsAt} label="Ends in" />}
        <StockMeter remaining={sale.remaining} stock={sale.stock} />
        <div className="sale-card__meta">
          <span className="price">{formatMoney(sale.priceCents)}</span>
          <span className="field__hint">Limit {sale.perUserLimit} per customer</span>
        </div>
      </div>
    </article>
  );
}
