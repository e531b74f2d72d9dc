import { signal } from '@preact/signals';

/** One line per distinct message, at most three at once: errors never stack into a storm. */
export interface Toast {
  id: number;
  text: string;
  kind: 'error' | 'info';
}
export const toasts = signal<Toast[]>([]);
let next = 1;

export function toast(text: string, kind: Toast['kind'] = 'error'): void {
  if (toasts.value.some((t) => t.text === text)) return;
  const t = { id: next++, text, kind };
  toasts.value = [...toasts.value.slice(-2), t];
  setTimeout(() => {
    toasts.value = toasts.value.filter((x) => x.id !== t.id);
  }, 5000);
}
export function dismiss(id: number): void {
  toasts.value = toasts.value.filter((x) => x.id !== id);
}
