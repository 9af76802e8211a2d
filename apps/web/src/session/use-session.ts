import { useEffect, useSyncExternalStore } from 'react';
import { sessionStore, type SessionState } from './session-store';

export function useSession(): SessionState {
  useEffect(() => {
    const onStorage = () => sessionStore.reload();
    window.addEventListener('storage', onStorage);
    return () => window.removeEventListener('storage', onStorage);
  }, []);
  return useSyncExternalStore(sessionStore.subscribe, sessionStore.getSnapshot);
}
