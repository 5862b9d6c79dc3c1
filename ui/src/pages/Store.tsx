export function Store() { return <p>Store</p>; }
