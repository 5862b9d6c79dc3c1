// Files the bundler turns into URLs of the build (Vite emits them under /ui/assets/).
declare module "*.png" {
  const url: string;
  export default url;
}
declare module "*.css";
declare module "*?url" {
  const url: string;
  export default url;
}
