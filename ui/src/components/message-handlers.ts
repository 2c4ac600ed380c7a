/** What a message's buttons ask for; App wires them to the ChatStore. */
export type MessageHandlers = {
  startEdit: (messageId: number) => void;
  editText: (text: string) => void;
  saveEdit: () => void;
  cancelEdit: () => void;
  regenerate: (messageId: number) => void;
  continueReply: (messageId: number) => void;
  switchBranch: (messageId: number) => void;
  remove: (messageId: number) => void;
  /** A remote reply failed for want of a (valid) API key: the Providers settings fix it. */
  openProviderSettings: () => void;
};
