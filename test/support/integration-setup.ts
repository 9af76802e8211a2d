// Integration tests start real apps and wait on real queues: give them time (jest's default is 5 s).
jest.setTimeout(120_000);
