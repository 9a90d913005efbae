#include "common/device/sysfsroot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace cloop::device {

namespace {

QString normalisedRoot(QString root)
{
    if (root.isEmpty())
        return QStringLiteral("/");
    return QDir::cleanPath(QFileInfo(root).absoluteFilePath());
}

// "/a/./b//../c" -> "/a/c". Unlike QDir::cleanPath, ".." never climbs
// above "/" ("/sys/../../x" is "/x", not "/../x").
QString absoluteCleanPath(QStringView path)
{
    QStringList parts;
    for (const QStringView part : path.split(QLatin1Char('/'), Qt::SkipEmptyParts)) {
        if (part == u"..") {
            if (!parts.isEmpty())
                parts.removeLast();
        } else if (part != u".") {
            parts.append(part.toString());
        }
    }
    return QLatin1Char('/') + parts.join(QLatin1Char('/'));
}

// Whether `path` is `top` or lies below it ("/sys", "/sys/bus", not "/system").
bool isUnder(QStringView path, QStringView top)
{
    return path == top || (path.startsWith(top) && path.at(top.size()) == QLatin1Char('/'));
}

} // namespace

SysfsRoot::SysfsRoot(QString root)
    : SysfsRoot(root, root, root)
{ }

SysfsRoot::SysfsRoot(QString sysRoot, QString devRoot, QString procRoot)
    : m_sysRoot(normalisedRoot(std::move(sysRoot)))
    , m_devRoot(normalisedRoot(std::move(devRoot)))
    , m_procRoot(normalisedRoot(std::move(procRoot)))
{ }

SysfsRoot SysfsRoot::withStandIn(KernelStandIn *standIn) const
{
    SysfsRoot answered = *this;
    answered.m_standIn = standIn;
    return answered;
}

QString SysfsRoot::path(QStringView absolute) const
{
    const QString clean = absoluteCleanPath(absolute);
    const QString *root = nullptr;
    if (isUnder(clean, u"/sys"))
        root = &m_sysRoot;
    else if (isUnder(clean, u"/dev"))
        root = &m_devRoot;
    else if (isUnder(clean, u"/proc"))
        root = &m_procRoot;
    if (!root || *root == QLatin1String("/"))
        return clean;
    return *root + clean;
}

std::optional<QString> SysfsRoot::readAttribute(QStringView absolutePath, qsizetype maxBytes) const
{
    // Unbuffered, in a loop: /proc files report size 0 and may be read in
    // pieces; sysfs attributes report 4096 whatever they hold.
    QFile file(path(absolutePath));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Unbuffered))
        return std::nullopt;
    QByteArray contents;
    while (contents.size() < maxBytes) {
        const QByteArray chunk = file.read(maxBytes - contents.size());
        if (chunk.isEmpty())
            break;
        contents += chunk;
    }
    if (file.error() != QFileDevice::NoError)
        return std::nullopt;
    return QString::fromUtf8(contents).trimmed();
}

QStringList SysfsRoot::list(QStringView absoluteDir) const
{
    return QDir(path(absoluteDir))
        .entryList(
            QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

std::optional<QString> SysfsRoot::resolve(QStringView absolutePath) const
{
    const QString clean = absoluteCleanPath(absolutePath);
    const QString canonical = QFileInfo(path(clean)).canonicalFilePath();
    if (canonical.isEmpty())
        return std::nullopt;
    // The same root the path was mapped below: /sys links stay in /sys.
    const QString mappedRoot = path(clean).chopped(clean.size());
    if (mappedRoot.isEmpty())
        return canonical;
    const QString root = QFileInfo(mappedRoot).canonicalFilePath();
    if (!canonical.startsWith(root) || canonical.size() == root.size()
        || canonical.at(root.size()) != QLatin1Char('/'))
        return std::nullopt;
    return canonical.mid(root.size());
}

Status SysfsRoot::writeAttribute(QStringView absolutePath, QByteArrayView bytes) const
{
    const QString real = path(absolutePath);
    if (m_standIn)
        return m_standIn->write(absoluteCleanPath(absolutePath), real, bytes);
    const auto failed = [&](int error) {
        return Error::make(QStringLiteral("kernel_write"),
            QStringLiteral("writing \"%1\" to %2: %3")
                .arg(QString::fromUtf8(bytes.trimmed()).left(80), absolutePath.toString(),
                    QString::fromLocal8Bit(std::strerror(error))));
    };
    const int fd = ::open(QFile::encodeName(real).constData(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return failed(errno);
    ssize_t written = 0;
    do {
        written = ::write(fd, bytes.data(), size_t(bytes.size()));
    } while (written < 0 && errno == EINTR);
    const int writeError = errno;
    ::close(fd);
    if (written < 0)
        return failed(writeError);
    if (written != bytes.size())
        return failed(EIO);
    return {};
}

bool SysfsRoot::exists(QStringView absolutePath) const
{
    return QFileInfo::exists(path(absolutePath));
}

bool SysfsRoot::isCharacterDevice(QStringView absolutePath) const
{
    struct stat info
    {
    };
    return ::stat(QFile::encodeName(path(absolutePath)).constData(), &info) == 0
        && S_ISCHR(info.st_mode);
}

bool SysfsRoot::isWritable(QStringView absolutePath) const
{
    return ::access(QFile::encodeName(path(absolutePath)).constData(), W_OK) == 0;
}

} // namespace cloop::device
