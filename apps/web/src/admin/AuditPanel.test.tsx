import { render, screen } from '@testing-library/react';
import { AuditPanel } from './AuditPanel';
import { makeAudit } from './test-fixtures';

const leases = { epoch: 2, granted: 120, converted: 55, inDoubt: 20, returned: 0, outstanding: 65, pending: 0 };

describe('AuditPanel', () => {
  it('shows the lease ledger, and says why units are in doubt after Redis lost its state', () => {
    render(<AuditPanel audit={makeAudit({ ok: false, leases })} />);
    expect(screen.getByText(/Leased to Redis 120 · converted to orders 55 · in doubt 20/)).toBeInTheDocument();
    expect(screen.getByText(/Redis lost its state; reconciliation returns these units/)).toBeInTheDocument();
  });

  it('leaves the lease line out for a sale that never leased (MySQL-only strategies)', () => {
    render(<AuditPanel audit={makeAudit({ leases: { ...leases, granted: 0, inDoubt: 0 } })} />);
    expect(screen.queryByText(/Leased to Redis/)).not.toBeInTheDocument();
  });

  it('keeps an oversell whose orders expired since: red, with the peak and what is left now', () => {
    render(<AuditPanel audit={makeAudit({ ok: false, held: 0, oversold: 0, oversoldPeak: 450 })} />);
    expect(screen.getByText('Oversold')).toBeInTheDocument();
    expect(screen.queryByText(/Books balance/)).not.toBeInTheDocument();
    expect(
      screen.getByText('450 units oversold at the peak (0 now: expiries and cancels gave the rest back)'),
    ).toBeInTheDocument();
  });
});
