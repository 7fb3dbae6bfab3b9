import { api } from "./api";

/** Retries a request. */
export async function withRetry(fn, attempts) {
  for (let i = 0; i < attempts; i++) {
    try { return await fn(); } catch (e) { if (i === attempts - 1) throw e; }
  }
}

export class EventBus {
  constructor() {
    this.handlers = new Map();
  }

  /** Calls every handler. */
  emit(name, payload) {
    for (const h of this.handlers.get(name) || []) h(payload);
  }
}

const debounce = (fn, ms) => {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
};
