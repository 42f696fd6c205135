// Stylesheets are bundled by Bun.build into the console's CSS file; they export nothing.
declare module "*.css";
