// What the client keeps across pages: its keys in localStorage (memory when that fails), and the kept state.

import { isRecord, finiteOr } from "./values.js";

// ---- Storage: localStorage, namespaced, and memory when it fails ------------------------------

/**
 * One client's keys in a Storage (localStorage unless a test gives another). Every change reads the
 * stored value afresh and writes it back, so two tabs of one app keep each other's queue and history.
 * When the storage refuses (unavailable, full), the value lives in memory for this page and the app
 * hears `storageFailed` once per failing key until a write succeeds again.
 */
export class Store {
  constructor(backend, namespace, onFailure) {
    this.backend = backend;
    this.namespace = namespace;
    this.onFailure = onFailure;
    this.memory = new Map();
    // Keys whose latest value is only in memory: the stored one is older.
    this.memoryOnly = new Set();
  }

  read(name) {
    let text = this.memory.get(name);
    if (this.backend && !this.memoryOnly.has(name)) {
      try {
        text = this.backend.getItem(this.namespace + name) ?? undefined;
      } catch (error) {
        this.fail(name, error);
      }
    }
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined; // written by something else: start afresh
    }
  }

  write(name, value) {
    const text = JSON.stringify(value);
    this.memory.set(name, text);
    if (!this.backend) return;
    try {
      this.backend.setItem(this.namespace + name, text);
      this.memoryOnly.delete(name);
    } catch (error) {
      this.fail(name, error);
    }
  }

  update(name, change) {
    const value = change(this.read(name));
    this.write(name, value);
    return value;
  }

  fail(name, error) {
    if (this.memoryOnly.has(name)) return;
    this.memoryOnly.add(name);
    this.onFailure(error);
  }
}

/** The page's localStorage, or null with the reason when the browser refuses it (privacy settings, sandboxed frames). */
export function openLocalStorage() {
  try {
    const storage = globalThis.localStorage;
    const probe = "herald.probe";
    storage.setItem(probe, probe);
    storage.removeItem(probe);
    return { storage, error: null };
  } catch (error) {
    return { storage: null, error };
  }
}

export function readState(stored) {
  const state = isRecord(stored) ? stored : {};
  return {
    installationId: typeof state.installationId === "string" && state.installationId !== "" ? state.installationId : null,
    firstOpen: finiteOr(state.firstOpen, null),
    dataCollection: typeof state.dataCollection === "boolean" ? state.dataCollection : null,
    lastDisplay: finiteOr(state.lastDisplay, null),
    impressions: isRecord(state.impressions) ? state.impressions : {},
    backgroundAt: finiteOr(state.backgroundAt, null),
  };
}
