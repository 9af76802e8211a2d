import { DeadlinePassed, withDeadline } from './explorer-error';

describe('withDeadline (the explorer watchdog)', () => {
  it('answers what the work answers when it settles in time', async () => {
    await expect(withDeadline(Promise.resolve(7), 1_000, 'a run')).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('boom')), 1_000, 'a run')).rejects.toThrow('boom');
  });

  it('throws DeadlinePassed, naming the work, when the work hangs', async () => {
    const hung = new Promise<never>(() => undefined);
    const started = Date.now();
    const outcome = withDeadline(hung, 50, 'bringing the processes back');
    await expect(outcome).rejects.toBeInstanceOf(DeadlinePassed);
    await expect(outcome).rejects.toThrow('bringing the processes back did not finish in 0 s');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
