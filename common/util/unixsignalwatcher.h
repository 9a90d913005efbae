#pragma once

#include <QObject>

#include <initializer_list>

class QSocketNotifier;

namespace cloop::util {

// Turns SIGTERM/SIGINT/SIGHUP into a Qt signal through a self-pipe: the
// handler only write()s one byte, everything else runs in the event loop.
class UnixSignalWatcher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UnixSignalWatcher)

public:
    explicit UnixSignalWatcher(std::initializer_list<int> signalNumbers, QObject *parent = nullptr);
    ~UnixSignalWatcher() override;

Q_SIGNALS:
    void received(int signalNumber);

private:
    void onReadable();
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace cloop::util
