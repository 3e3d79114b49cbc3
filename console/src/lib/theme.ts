import { useEffect, useState } from 'preact/hooks';

/** Dark or light: the system's choice until the viewer picks one (kept in localStorage). */
export type Theme = 'dark' | 'light';

function initial(): Theme {
  const saved = localStorage.getItem('fleetwatch-theme');
  if (saved === 'dark' || saved === 'light') return saved;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(initial);
  useEffect(() => {
    document.documentElement.dataset['theme'] = theme;
  }, [theme]);
  return [
    theme,
    () => {
      const next = theme === 'dark' ? 'light' : 'dark';
      localStorage.setItem('fleetwatch-theme', next);
      setTheme(next);
    },
  ];
}
