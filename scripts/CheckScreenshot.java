import java.awt.image.BufferedImage;
import java.io.File;
import javax.imageio.ImageIO;

/**
 * Fails (exit 1) when a screenshot is blank: fewer than 2 % of its pixels differ from the top-left pixel, or it
 * has fewer than 8 distinct colours. Run as a single-file program: java scripts/CheckScreenshot.java shot.png
 */
public class CheckScreenshot {
    public static void main(String[] args) throws Exception {
        BufferedImage img = ImageIO.read(new File(args[0]));
        if (img == null) {
            System.err.println("check-report: " + args[0] + " is not an image");
            System.exit(1);
        }
        int bg = img.getRGB(0, 0);
        long differ = 0;
        java.util.Set<Integer> colours = new java.util.HashSet<>();
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int p = img.getRGB(x, y);
                if (p != bg) {
                    differ++;
                }
                if (colours.size() < 64) {
                    colours.add(p);
                }
            }
        }
        double share = (double) differ / ((long) img.getWidth() * img.getHeight());
        System.out.printf(java.util.Locale.ROOT, "check-report: %dx%d screenshot, %.1f%% non-background pixels, %s colours%n",
                img.getWidth(), img.getHeight(), 100 * share, colours.size() >= 64 ? ">= 64" : colours.size());
        if (share < 0.02 || colours.size() < 8) {
            System.err.println("check-report: the screenshot is blank");
            System.exit(1);
        }
    }
}
