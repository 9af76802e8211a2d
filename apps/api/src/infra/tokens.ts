export { APP_CONFIG } from '@flash-sale/config';
export { REDIS_CLIENT } from '@flash-sale/redis';
