package dev.gpucloud.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.gpucloud.contracts.grpc.v1.JobServiceGrpc;
import dev.gpucloud.contracts.grpc.v1.JobSpec;
import dev.gpucloud.contracts.grpc.v1.SubmitJobRequest;
import dev.gpucloud.identity.BearerToken;
import io.grpc.ManagedChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (Debian's headless Chromium through its chromedriver, with Selenium) against the
 * stack that ./gpucloud up starts, over TLS: a tenant-admin signs in through the link `gpucloud console` prints, sees
 * the job list, opens a running job and watches a new line of its output appear without a reload, sees why another
 * job waits, reads the tenant's quota and cost, and gets around with the keyboard. The browser is told to accept the
 * stack's own CA's certificate with --ignore-certificate-errors, for this test's throwaway profile only.
 */
class ConsoleIT {

    static final Path RUN_DIR = WalkingSkeletonIT.RUN_DIR;
    static final String TENANT = "console-" + UUID.randomUUID().toString().substring(0, 6);
    static ManagedChannel channel;
    static String token;
    static WebDriver browser;

    @BeforeAll
    static void up() throws Exception {
        WalkingSkeletonIT.gpucloud("up");
        WalkingSkeletonIT.gpucloud("--profile", "ada", "login", "--dev", "--user", "ada", "--tenant", TENANT,
                "--role", "tenant-admin");
        token = Files.readString(RUN_DIR.resolve("home/profiles/ada.token")).strip();
        channel = StackTls.channel(RUN_DIR, WalkingSkeletonIT.SCHEDULER);
        System.setProperty("webdriver.chrome.driver", "/usr/bin/chromedriver"); // Debian's: nothing is downloaded
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--ignore-certificate-errors", "--user-data-dir=" + RUN_DIR.resolve("chromium-profile"));
        browser = new ChromeDriver(options);
    }

    @AfterAll
    static void down() throws Exception {
        try {
            if (browser != null) {
                browser.quit();
            }
            if (channel != null) {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } finally {
            WalkingSkeletonIT.gpucloud("down");
        }
    }

    static String submit(String name, int gpus, String seconds) {
        return JobServiceGrpc.newBlockingStub(channel).withCallCredentials(new BearerToken(token))
                .withDeadlineAfter(30, TimeUnit.SECONDS).submitJob(SubmitJobRequest.newBuilder().setTenant(TENANT)
                        .setClientRequestId(UUID.randomUUID().toString()).setSpec(JobSpec.newBuilder().setName(name)
                                .setWorkers(1).setGpusPerWorker(gpus).addGpuModels("A100-SXM4-40GB")
                                .addCommand("sleep").addCommand(seconds)).build()).getJob().getJobId();
    }

    /** What `./gpucloud --profile ada console` printed: the sign-in link. */
    static String consoleLink() throws Exception {
        Path log = RUN_DIR.resolve("gpucloud.log");
        long before = Files.exists(log) ? Files.size(log) : 0;
        WalkingSkeletonIT.gpucloud("--profile", "ada", "console");
        String printed = Files.readString(log).substring((int) before);
        return printed.lines().filter(l -> l.startsWith("https://")).reduce((a, b) -> b).orElseThrow(() ->
                new AssertionError("gpucloud console printed no link:\n" + printed));
    }

    WebDriverWait waiting(int seconds) {
        return new WebDriverWait(browser, Duration.ofSeconds(seconds));
    }

    @Test
    void a_user_signs_in_follows_a_jobs_output_live_sees_why_another_waits_and_reads_quota_and_cost()
            throws Exception {
        String running = submit("<script>alert('train')</script>", 2, "45");
        String link = consoleLink();
        assertThat(link).startsWith("https://localhost:" + WalkingSkeletonIT.SCHEDULER + "/console/login#token=");

        // signing in: the link's fragment goes to /console/session, which answers with the session cookie
        browser.get(link);
        waiting(30).until(ExpectedConditions.urlContains("/console/jobs"));
        assertThat(browser.getCurrentUrl()).doesNotContain("token=");
        assertThat(browser.findElement(By.id("who")).getText()).contains("ada");
        assertThat(browser.manage().getCookieNamed("gpucloud_console").isHttpOnly()).isTrue();
        assertThat(browser.manage().getCookieNamed("gpucloud_console").isSecure()).isTrue();

        // the list shows the job, its name escaped (no alert ran: the page is still interactive)
        WebElement row = waiting(10).until(d -> d.findElement(By.cssSelector("tr[data-job='" + running + "']")));
        assertThat(row.findElement(By.className("name")).getText()).isEqualTo("<script>alert('train')</script>");

        // the running job: its output follows live; the agent's closing line appears without a reload
        browser.navigate().refresh();
        waitForState(running, "RUNNING", 90);
        browser.get("https://localhost:" + WalkingSkeletonIT.SCHEDULER + "/console/jobs/" + running);
        assertThat(browser.findElement(By.id("state")).getText()).isEqualTo("RUNNING");
        assertThat(browser.findElements(By.cssSelector("#placement tbody tr"))).hasSize(1);
        WebElement output = browser.findElement(By.id("output"));
        waiting(60).until(d -> output.getText().contains("simulated worker 0 of 1"));
        assertThat(output.getText()).doesNotContain("exited 0");
        String pending = submit("too-big", 8, "5"); // 8 GPUs while 2 of the host's 8 are held: it waits
        waiting(120).until(d -> output.getText().contains("exited 0 after 45 s"));
        waiting(30).until(d -> d.findElement(By.id("output-status")).getText().contains("has ended"));

        // the pending job's page says why it waits
        browser.get("https://localhost:" + WalkingSkeletonIT.SCHEDULER + "/console/jobs/" + pending);
        String state = browser.findElement(By.id("state")).getText();
        if (state.equals("PENDING")) {
            assertThat(browser.findElement(By.id("why")).getText()).isNotBlank();
        }

        // keyboard: j selects the first row, Enter opens it; g t goes to the tenant page
        browser.get("https://localhost:" + WalkingSkeletonIT.SCHEDULER + "/console/jobs?state=PENDING");
        Actions keys = new Actions(browser);
        keys.sendKeys("?").perform();
        assertThat(browser.findElement(By.id("keys")).isDisplayed()).isTrue();
        keys.sendKeys(Keys.ESCAPE).perform();
        keys.sendKeys("/").perform();
        assertThat(browser.switchTo().activeElement().getAttribute("id")).isEqualTo("filter");
        keys.sendKeys(Keys.ESCAPE).perform();
        browser.findElement(By.tagName("body")).click();
        keys.sendKeys("j").perform();
        if (!browser.findElements(By.cssSelector("tr.selected")).isEmpty()) {
            keys.sendKeys(Keys.ENTER).perform();
            waiting(10).until(ExpectedConditions.urlContains("/console/jobs/job"));
        }
        keys.sendKeys("g").sendKeys("t").perform();
        waiting(10).until(ExpectedConditions.urlContains("/console/tenant"));

        // the tenant's quota and this month's cost, read from billing with the user's own token
        assertThat(browser.findElement(By.id("quota")).getText()).contains("Soft quota", "Queued");
        assertThat(browser.findElement(By.id("cost")).getText()).contains("USD so far in")
                .doesNotContain("unavailable");

        // log out: the session is gone, the pages go to the login page
        browser.findElement(By.id("logout")).click();
        waiting(10).until(ExpectedConditions.urlContains("/console/login"));
        browser.get("https://localhost:" + WalkingSkeletonIT.SCHEDULER + "/console/jobs");
        waiting(10).until(ExpectedConditions.urlContains("/console/login?m=signin"));
    }

    void waitForState(String jobId, String state, int seconds) {
        waiting(seconds).until(d -> {
            d.navigate().refresh();
            return d.findElements(By.cssSelector("tr[data-job='" + jobId + "'] td.state")).stream()
                    .anyMatch(td -> td.getText().equals(state));
        });
    }
}
