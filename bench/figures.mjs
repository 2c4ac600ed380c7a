// Figures as the app bench reports them.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
