import { AppError } from '../../platform/errors.js';

/** refused: the gateway answered no; timeout: no answer in time (it may have acted); unavailable: no connection; bad_response: unparseable. */
export type GatewayErrorKind = 'refused' | 'timeout' | 'unavailable' | 'bad_response';

export class GatewayError extends Error {
  constructor(
    readonly kind: GatewayErrorKind,
    message: string,
    readonly info: { httpStatus?: number; statusCode?: string; statusMessage?: string; messages?: string[] } = {},
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  /** The gateway's own code: the body's status_code, else the HTTP status. */
  get statusCode(): string | undefined {
    return this.info.statusCode ?? (this.info.httpStatus !== undefined ? String(this.info.httpStatus) : undefined);
  }
}

/** Maps a gateway failure onto the service's error catalogue (refusals 502, timeouts 504, unreachable 503). */
export function toAppError(err: GatewayError): AppError {
  switch (err.kind) {
    case 'timeout':
      return new AppError('GATEWAY_TIMEOUT', 'The gateway did not answer in time; retrying the same request is safe.');
    case 'unavailable':
      return new AppError('GATEWAY_UNAVAILABLE', 'The gateway could not be reached.');
    case 'bad_response':
      return new AppError('GATEWAY_BAD_RESPONSE', 'The gateway answered with something that could not be understood.');
    case 'refused': {
      const status_code = err.statusCode ?? '502';
      const status_message = err.info.statusMessage ?? err.info.messages?.join('; ') ?? 'refused';
      return new AppError('GATEWAY_REFUSED', `The gateway refused the request: ${status_message}`, { gateway: { status_code, status_message } });
    }
  }
}
