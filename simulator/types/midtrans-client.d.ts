// Ambient types for the CommonJS `midtrans-client` package (1.4.x), covering what the simulator's
// compatibility tests use. The package ships no types of its own.
declare module 'midtrans-client' {
  export interface ClientOptions {
    isProduction: boolean;
    serverKey: string;
    clientKey?: string;
  }
  export type ApiResponse = Record<string, unknown>;
  export interface TransactionApi {
    status(id: string): Promise<ApiResponse>;
    statusb2b(id: string): Promise<ApiResponse>;
    approve(id: string): Promise<ApiResponse>;
    deny(id: string): Promise<ApiResponse>;
    cancel(id: string): Promise<ApiResponse>;
    expire(id: string): Promise<ApiResponse>;
    refund(id: string, parameter?: object): Promise<ApiResponse>;
    notification(notification: string | object): Promise<ApiResponse>;
  }
  export interface HttpClient {
    http_client: { defaults: { headers: { common: Record<string, string> } } };
  }
  export class Snap {
    constructor(options: ClientOptions);
    createTransaction(parameter: object): Promise<{ token: string; redirect_url: string }>;
    createTransactionToken(parameter: object): Promise<string>;
    createTransactionRedirectUrl(parameter: object): Promise<string>;
    transaction: TransactionApi;
    httpClient: HttpClient;
  }
  export class CoreApi {
    constructor(options: ClientOptions);
    charge(parameter: object): Promise<ApiResponse>;
    cardToken(parameter: object): Promise<ApiResponse>;
    cardRegister(parameter: object): Promise<ApiResponse>;
    cardPointInquiry(tokenId: string): Promise<ApiResponse>;
    transaction: TransactionApi;
    httpClient: HttpClient;
  }
  export class MidtransError extends Error {
    httpStatusCode: number | string | null;
    ApiResponse: unknown;
    rawHttpClientData: unknown;
  }
}

declare module 'midtrans-client/lib/apiConfig' {
  class ApiConfig {
    static CORE_SANDBOX_BASE_URL: string;
    static CORE_PRODUCTION_BASE_URL: string;
    static SNAP_SANDBOX_BASE_URL: string;
    static SNAP_PRODUCTION_BASE_URL: string;
  }
  export = ApiConfig;
}
