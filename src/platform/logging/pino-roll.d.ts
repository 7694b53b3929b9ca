declare module 'pino-roll' {
  import type { EventEmitter } from 'node:events';

  interface PinoRollOptions {
    file: string | (() => string);
    size?: string | number;
    frequency?: 'daily' | 'hourly' | number;
    extension?: string;
    symlink?: boolean;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
    dateFormat?: string;
    mkdir?: boolean;
    sync?: boolean;
    minLength?: number;
    /** The mode new files are created with (SonicBoom's option). */
    mode?: number;
  }

  /** The SonicBoom stream pino-roll returns (the parts used here). */
  export interface RollStream extends EventEmitter {
    readonly destroyed: boolean;
    readonly file: string;
    write(data: string): boolean;
    flush(cb?: (err?: Error | null) => void): void;
    end(): void;
  }

  export default function build(options: PinoRollOptions): Promise<RollStream>;
}
