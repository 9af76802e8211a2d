export { APP_CONFIG } from '@flash-sale/config';
