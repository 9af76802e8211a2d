import type { Sale } from '@flash-sale/contract';

/** The sale's picture, or a branded placeholder; decorative either way (the name is the heading). */
export function SaleImage({ sale, className }: { sale: Sale; className: string }) {
  if (sale.imageUrl) return <img className={className} src={sale.imageUrl} alt="" loading="lazy" />;
  return (
    <div className={className} aria-hidden="true">
      ⚡
    </div>
  );
}
