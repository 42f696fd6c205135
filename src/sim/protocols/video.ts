/** The video task protocols and the providers that speak them (one provider per family). */
import { registerSimRoutes } from "../routes.ts";
import { klingError, klingVideoRoutes } from "./video-kling.ts";
import { ltxError, ltxVideoRoutes } from "./video-ltx.ts";
import { seedanceError, seedanceVideoRoutes } from "./video-seedance.ts";
import { videoFileRoutes } from "./video-tasks.ts";
import { veoSignedFileRoutes, veoVideoRoutes } from "./video-veo.ts";

export function registerVideoSimRoutes(): void {
  registerSimRoutes("kling", klingVideoRoutes);
  registerSimRoutes("kling", videoFileRoutes(klingError));
  registerSimRoutes("ltx", ltxVideoRoutes);
  registerSimRoutes("ltx", videoFileRoutes(ltxError));
  registerSimRoutes("seedance", seedanceVideoRoutes);
  registerSimRoutes(
    "seedance",
    videoFileRoutes((s, m) => seedanceError(s, m)),
  );
  registerSimRoutes("veo", veoVideoRoutes);
  registerSimRoutes("veo", veoSignedFileRoutes);
}
