export function ThreadInspector({ tid }: { tid: string }) { return <p>{tid}</p>; }
