export function RunPage({ tid, rid }: { tid: string; rid: string }) { return <p>{tid}{rid}</p>; }
