import { Link, useParams } from 'react-router';
import { OrderTracker } from './OrderTracker';
import { RequireGuest } from './RequireGuest';

export function OrderPage() {
  const { orderNo = '' } = useParams();
  return (
    <RequireGuest>
      {(guest) => (
        <div className="narrow">
          <p>
            <Link to="/orders">← My orders</Link>
          </p>
          <h1>Order</h1>
          <OrderTracker orderNo={orderNo} guest={guest} />
        </div>
      )}
    </RequireGuest>
  );
}
