// Small helpers every part of the mock backend uses.
import type { IpcError, IpcErrorKind } from '../../../src/ipc/bindings';

/** A deep copy through JSON, as the IPC copies every value it carries. */
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An IpcError; its kind is one of the backend's (IpcErrorKind, generated from Rust). */
export const ipcError = (kind: IpcErrorKind, message: string): IpcError => ({ kind, message });

/** A FieldError as the backend sends it: the field it concerns beside the message. */
export const refuse = (field: string, message: string): IpcError => ({ kind: 'invalidInput', message, field });

export const isU32 = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 4_294_967_295;

/**
 * Every value of the string union T, each once: the record's keys must be exactly T's values, so a value the
 * generated bindings add or rename makes the type check fail here.
 */
export const variants = <T extends string>(all: Record<T, true>): readonly T[] => Object.keys(all) as T[];

/** The backend's clock for saved things (createdAt, updatedAt): Unix milliseconds, each reading later than the last. */
let clock = Date.now();
export const now = () => ++clock;
