export interface LeasePolicy {
  /** Units one lease hands to Redis (at most what MySQL has available). */
  leaseSize: number;
  /** A purchase that leaves Redis with fewer units than this asks for the next lease in the background. */
  lowWater: number;
}
