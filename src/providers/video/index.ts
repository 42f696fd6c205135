/** Video adapters by catalog protocol (`video-kling`, `video-ltx`, `video-seedance`, `video-veo`). */
import type { VideoProvider } from "../../core/video/provider";
import { klingVideo } from "./kling";
import { ltxVideo } from "./ltx";
import { seedanceVideo } from "./seedance";
import { veoVideo } from "./veo";

const ADAPTERS: Record<string, VideoProvider> = {
  [klingVideo.protocol]: klingVideo,
  [ltxVideo.protocol]: ltxVideo,
  [seedanceVideo.protocol]: seedanceVideo,
  [veoVideo.protocol]: veoVideo,
};

export function videoProviderFor(protocol: string): VideoProvider | undefined {
  return ADAPTERS[protocol];
}
