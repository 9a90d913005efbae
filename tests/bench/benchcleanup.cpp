#include "bench/benchcleanup.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

namespace cloop::bench {

namespace {

class UndoRegistry
{
public:
    static UndoRegistry &instance()
    {
        static UndoRegistry registry;
        return registry;
    }

    std::uint64_t add(std::string script)
    {
        std::call_once(m_watcherStarted, [this] { startWatcher(); });
        const std::lock_guard lock(m_mutex);
        const std::uint64_t id = m_next++;
        m_scripts.emplace(id, std::move(script));
        return id;
    }

    // Runs the script of `id` unless the watcher or an earlier call did.
    void runAndForget(std::uint64_t id)
    {
        const std::lock_guard lock(m_mutex);
        const auto found = m_scripts.find(id);
        if (found == m_scripts.end())
            return;
        const std::string script = std::move(found->second);
        m_scripts.erase(found);
        run(script);
    }

private:
    static void run(const std::string &script)
    {
        // The scripts' own failures (a link already gone) are not the
        // benchmark's; what they print goes to stderr for the record.
        [[maybe_unused]] const int status = std::system(script.c_str());
    }

    static QList<pid_t> children()
    {
        QList<pid_t> found;
        const pid_t self = ::getpid();
        const auto entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
        for (const QString &entry : entries) {
            bool isPid = false;
            const pid_t pid = entry.toInt(&isPid);
            if (!isPid)
                continue;
            QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
            if (!stat.open(QIODevice::ReadOnly))
                continue;
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            const QByteArray line = stat.readAll();
            const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
            if (fields.size() > 1 && fields.at(1).toInt() == self && fields.at(0) != "Z")
                found.append(pid);
        }
        return found;
    }

    static void stopChildren()
    {
        for (const pid_t pid : children())
            ::kill(pid, SIGTERM);
        for (int waited = 0; waited < 100 && !children().isEmpty(); ++waited)
            ::usleep(50'000);
        for (const pid_t pid : children())
            ::kill(pid, SIGKILL);
    }

    static void onSignal(int signal)
    {
        const unsigned char byte = static_cast<unsigned char>(signal);
        [[maybe_unused]] const ssize_t written = ::write(s_signalPipe[1], &byte, 1);
    }

    void startWatcher()
    {
        if (::pipe(s_signalPipe) != 0)
            return;
        struct sigaction action = {};
        action.sa_handler = &UndoRegistry::onSignal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        for (const int signal : { SIGINT, SIGTERM, SIGHUP })
            ::sigaction(signal, &action, nullptr);
        std::thread([this] {
            unsigned char signal = 0;
            while (::read(s_signalPipe[0], &signal, 1) != 1) { }
            // The figures printed so far are kept, whatever comes after.
            std::fflush(stdout);
            std::fprintf(
                stderr, "stopped by signal %d: undoing what the benchmark set up\n", int(signal));
            // Held to the end: a destructor on the main thread must not
            // undo the same thing at the same time.
            m_mutex.lock();
            // The hub, forwarders and agents it started would go with it
            // (their parent-death signal) but only after the undoing, and
            // write into the folders being removed meanwhile.
            stopChildren();
            for (auto it = m_scripts.rbegin(); it != m_scripts.rend(); ++it)
                run(it->second);
            std::_Exit(128 + signal);
        }).detach();
    }

    static inline int s_signalPipe[2] = { -1, -1 };
    std::once_flag m_watcherStarted;
    std::mutex m_mutex;
    std::map<std::uint64_t, std::string> m_scripts;
    std::uint64_t m_next = 1;
};

} // namespace

QString shellQuoted(const QString &text)
{
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QLatin1String("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

UndoOnExit::UndoOnExit(QString script)
    : m_id(UndoRegistry::instance().add(script.toStdString()))
{ }

UndoOnExit::~UndoOnExit()
{
    runNow();
}

void UndoOnExit::runNow()
{
    UndoRegistry::instance().runAndForget(m_id);
}

PrivateScratch::PrivateScratch()
{
    QByteArray pattern = QFile::encodeName(QDir::tempPath()) + "/cloop-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        std::perror("cannot make a private temporary folder");
        std::exit(1);
    }
    m_path = QFile::decodeName(pattern);
    qputenv("TMPDIR", pattern);
    // The agent's sandboxes mount its work root, which lives in here: any
    // still there when the benchmark ends are its own.
    m_undo = std::make_unique<UndoOnExit>(
        QStringLiteral("root=%1; "
                       "if command -v podman >/dev/null; then "
                       "for c in $(podman ps -aq --filter label=cloop.run-id 2>/dev/null); do "
                       "podman inspect --format '{{range .Mounts}}{{.Source}} {{end}}' \"$c\" "
                       "2>/dev/null | tr ' ' '\\n' | grep -q \"^$root/\" && "
                       "podman rm -f -t 0 \"$c\" >/dev/null 2>&1; "
                       "done; fi; rm -rf \"$root\"")
            .arg(shellQuoted(m_path)));
}

} // namespace cloop::bench
