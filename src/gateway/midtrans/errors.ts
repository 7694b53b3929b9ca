import { GatewayError, type Refusal } from '../port.js';

/**
 * A refusal as the wire client throws it: the port's error, with the HTTP status beside it, since
 * some answers mean something only by their status (404: not known, 409: the link exists). Only
 * the adapter reads it; the domain sees a `GatewayError` or a result.
 */
export class MidtransRefusal extends GatewayError {
  constructor(
    readonly httpStatus: number,
    override readonly refusal: Refusal,
  ) {
    super('refused', `gateway refused (${refusal.code})`, refusal);
  }
}
