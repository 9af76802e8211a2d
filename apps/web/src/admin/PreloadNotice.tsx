import { ErrorNotice } from '../components/ErrorNotice';
import type { usePreloadSale } from './use-preload-sale';

/** The outcome of the last Preload press, in a live region that is always there so it is announced. */
export function PreloadNotice({ preload }: { preload: ReturnType<typeof usePreloadSale> }) {
  const name = preload.variables?.name;
  return (
    <div className="admin-feedback" aria-live="polite">
      {preload.isSuccess && (
        <div className="notice notice--success">
          <span>
            Preloaded “{name}”: Redis now holds {preload.data.remaining.toLocaleString('en-US')} of{' '}
            {preload.data.stock.toLocaleString('en-US')} units, reloaded from MySQL.
          </span>
        </div>
      )}
      {preload.isError && <ErrorNotice error={preload.error} title={`Could not preload “${name}”`} />}
    </div>
  );
}
