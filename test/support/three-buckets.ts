// The `integration-3-buckets` jest project: every sale a test creates is spread over three buckets
// (test/support/test-env.ts reads this, per test file's own process environment).
process.env['TEST_SALE_BUCKETS'] = '3';
