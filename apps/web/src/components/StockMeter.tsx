interface StockMeterProps {
  remaining: number;
  stock: number;
}

/** "37 of 100 left" with a bar; a native <meter> so assistive technology reads it as a gauge. */
export function StockMeter({ remaining, stock }: StockMeterProps) {
  const low = Math.max(1, Math.round(stock * 0.2));
  return (
    <div className="stock">
      <meter
        className="stock__meter"
        min={0}
        max={stock}
        low={low}
        optimum={stock}
        value={remaining}
        aria-label="Units left"
      />
      <span className="stock__text">
        <strong>{remaining.toLocaleString('en-US')}</strong> of {stock.toLocaleString('en-US')} left
      </span>
    </div>
  );
}
