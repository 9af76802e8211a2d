import { heldPeak } from './checker';

const order = (status: string, quantity: number, createdAt: number, updatedAt = createdAt) => ({
  status,
  quantity,
  createdAt,
  updatedAt,
});

describe('heldPeak: the most units the rows held at once', () => {
  it('a unit given back and sold again is never counted twice, even within the same millisecond', () => {
    expect(heldPeak([order('EXPIRED', 1, 0, 10), order('PENDING_PAYMENT', 1, 10)])).toBe(1);
    expect(heldPeak([order('CANCELLED', 2, 0, 5), order('PAID', 1, 6), order('PAID', 1, 7)])).toBe(2);
  });

  it('an oversell whose orders all expired since is still its peak', () => {
    const oversold = [order('EXPIRED', 1, 0, 100), order('EXPIRED', 1, 1, 100), order('EXPIRED', 1, 2, 101)];
    expect(heldPeak(oversold)).toBe(3);
  });

  it('FAILED and QUEUED rows hold nothing', () => {
    expect(heldPeak([order('FAILED', 4, 0), order('QUEUED', 1, 0), order('PAID', 1, 1)])).toBe(1);
  });
});
